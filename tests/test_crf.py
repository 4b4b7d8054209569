"""Linear-chain CRF: forward algorithm, Viterbi and marginals against brute force."""
import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from greenkd_spacy.models.pytorch.crf import LinearChainCRF, biluo_constraints

LABELS = ["O", "B-PER", "I-PER", "L-PER", "U-PER"]


@torch.no_grad()
def brute_force(crf, emissions, length):
    trans, start, end = crf._scores()
    best, best_score, scores = None, -float("inf"), {}
    for tags in itertools.product(range(crf.n_labels), repeat=length):
        s = start[tags[0]] + emissions[0, tags[0]] + end[tags[-1]]
        for t in range(1, length):
            s = s + trans[tags[t - 1], tags[t]] + emissions[t, tags[t]]
        scores[tags] = float(s)
        if s > best_score:
            best, best_score = list(tags), float(s)
    return best, scores


def random_crf(seed, constrained):
    torch.manual_seed(seed)
    crf = LinearChainCRF(len(LABELS), biluo_constraints(LABELS) if constrained else None)
    with torch.no_grad():
        crf.transitions.normal_()
        crf.start.normal_()
        crf.end.normal_()
    return crf


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), lengths=st.lists(st.integers(1, 4), min_size=1, max_size=3), constrained=st.booleans())
def test_crf_matches_brute_force(seed, lengths, constrained):
    crf = random_crf(seed, constrained)
    emissions = torch.randn(len(lengths), max(lengths), len(LABELS)) * 2
    lengths_t = torch.tensor(lengths)
    log_z = crf.log_partition(emissions, lengths_t).detach()
    paths = crf.viterbi(emissions, lengths_t)
    marginals = crf.marginals(emissions, lengths_t)
    for i, n in enumerate(lengths):
        best, scores = brute_force(crf, emissions[i, :n], n)
        total = torch.logsumexp(torch.tensor(list(scores.values())), 0)
        assert abs(float(log_z[i]) - float(total)) < 1e-3
        assert scores[tuple(paths[i])] >= max(scores.values()) - 1e-4
        assert len(paths[i]) == n
        probs = {k: torch.exp(torch.tensor(v) - total) for k, v in scores.items()}
        for t in range(n):
            for c in range(len(LABELS)):
                expected = sum(float(p) for k, p in probs.items() if k[t] == c)
                assert abs(float(marginals[i, t, c]) - expected) < 1e-3
        assert float(marginals[i, n:].abs().sum()) == 0.0
        nll = crf.nll(emissions[i : i + 1], torch.tensor([paths[i] + [0] * (emissions.shape[1] - n)]), lengths_t[i : i + 1])
        assert abs(float(nll) - (float(total) - scores[tuple(paths[i])])) < 1e-3


def textbook_log_partition(crf, emissions, lengths):
    """log Z by the forward algorithm in log space over every pair of tags (B x C x C
    per position), for autograd to differentiate: the reference for the gradients."""
    trans, start, end = crf._scores()
    alpha = start[None, :] + emissions[:, 0]
    finals = [None] * emissions.shape[0]
    for t in range(emissions.shape[1]):
        if t:
            alpha = torch.logsumexp(alpha[:, :, None] + trans[None], dim=1) + emissions[:, t]
        for i, n in enumerate(lengths.tolist()):
            if n == t + 1:
                finals[i] = alpha[i]
    return torch.logsumexp(torch.stack(finals) + end[None, :], dim=1)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), lengths=st.lists(st.integers(1, 30), min_size=1, max_size=6),
       constrained=st.booleans(), scale=st.sampled_from([1.0, 30.0]))
def test_forward_backward_gradient_equals_autograds(seed, lengths, constrained, scale):
    """The hand-written backward of the log-partition (forward-backward algorithm) gives
    autograd's gradients of the textbook forward algorithm, for the emissions and the
    transition, start and end scores, including confident emissions whose best tags at
    neighbouring positions may not follow one another (scale 30). In float64."""
    labels = ["O"] + [f"{p}-{t}" for t in ("PER", "ORG", "LOC") for p in "BILU"]
    torch.manual_seed(seed)
    crf = LinearChainCRF(len(labels), biluo_constraints(labels) if constrained else None).double()
    with torch.no_grad():
        for param in (crf.transitions, crf.start, crf.end):
            param.normal_()
    emissions = torch.randn(len(lengths), max(lengths), len(labels), dtype=torch.float64) * scale
    lengths_t = torch.tensor(lengths)
    weights = torch.rand(len(lengths), dtype=torch.float64) + 0.5

    def gradients(log_partition):
        crf.zero_grad()
        source = emissions.clone().requires_grad_(True)
        log_z = log_partition(source)
        (log_z * weights).sum().backward()
        # (autograd leaves no gradient where no sequence has a second position)
        return [log_z.detach(), source.grad] + [
            torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in (crf.transitions, crf.start, crf.end)
        ]

    fast = gradients(lambda source: crf.log_partition(source, lengths_t))
    reference = gradients(lambda source: textbook_log_partition(crf, source, lengths_t))
    for got, expected in zip(fast, reference):
        assert torch.allclose(got, expected, rtol=1e-9, atol=1e-9)
    assert fast[1].abs().sum() > 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 12))
def test_constrained_viterbi_is_always_well_formed(seed, length):
    crf = random_crf(seed, True)
    emissions = torch.randn(1, length, len(LABELS)) * 10
    path = [LABELS[i] for i in crf.viterbi(emissions, torch.tensor([length]))[0]]
    inside = False
    for tag in path:
        if tag.startswith(("I-", "L-")):
            assert inside
        else:
            assert not inside
        inside = tag.startswith(("B-", "I-"))
    assert not inside


def test_marginals_are_differentiable_for_distillation():
    crf = random_crf(0, True)
    emissions = torch.randn(2, 5, len(LABELS), requires_grad=True)
    marginals = crf.marginals(emissions, torch.tensor([5, 3]), create_graph=True)
    marginals[:, :, 1].sum().backward()
    assert emissions.grad is not None and float(emissions.grad.abs().sum()) > 0


def test_gold_docs_can_weigh_more_than_silver_ones():
    """CRFHead's gold term with per-sequence weights: the mean of weight x NLL, so a
    gold doc weighted 3 counts three times a teacher-annotated one (the silver path of
    greenkd_ner's distillation); weights of 1 are the unweighted loss."""
    from greenkd_spacy.models.pytorch.ldnet import CRFHead

    torch.manual_seed(0)
    head = CRFHead(4, 3, None)
    flat, lengths = torch.randn(5, 4), torch.tensor([3, 2])
    gold, rows = torch.tensor([[0, 1, 2], [2, 1, 0]]), torch.tensor([True, True])
    nll = head.crf.nll(head.emissions(flat, lengths), gold, lengths)
    plain = head(flat, lengths, gold=gold, gold_rows=rows)
    assert torch.allclose(plain, nll.mean())
    ones = head(flat, lengths, gold=gold, gold_rows=rows, gold_row_weights=torch.tensor([1.0, 1.0]))
    assert torch.allclose(ones, plain)
    weighted = head(flat, lengths, gold=gold, gold_rows=rows, gold_row_weights=torch.tensor([3.0, 1.0]))
    assert torch.allclose(weighted, (3 * nll[0] + nll[1]) / 2)


@pytest.mark.parametrize("constrained", [True, False])
def test_compiled_viterbi_gives_the_reference_paths(constrained):
    """The compiled decoder (allowed transitions only) and the torch reference agree on
    every path of padded batches of mixed lengths, empty sequences included."""
    from greenkd_spacy.models.pytorch import crf as crf_module

    assert crf_module._compiled_viterbi is not None, "build it: python setup.py build_ext --inplace"
    labels = ["O"] + [f"{p}-{t}" for t in ("PER", "ORG", "LOC") for p in "BILU"]
    torch.manual_seed(0)
    crf = LinearChainCRF(len(labels), biluo_constraints(labels) if constrained else None)
    with torch.no_grad():
        crf.transitions.normal_(0, 2)
        crf.start.normal_(0, 1)
        crf.end.normal_(0, 1)
    for trial in range(20):
        lengths = torch.randint(0, 30, (17,))
        emissions = torch.randn(17, int(lengths.max()) + 1, len(labels)) * 3
        assert crf.viterbi(emissions, lengths) == crf.viterbi_reference(emissions, lengths)
    assert crf.viterbi(torch.zeros((0, 4, len(labels))), torch.zeros((0,), dtype=torch.long)) == []
