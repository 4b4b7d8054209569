"""The densely connected LM: pruning a layer whose gate is 0 changes nothing else."""
import torch

from greenkd_spacy.models.pytorch.dense_lm import DenseLM, DenseLSTM, project_gates, r3_penalty, reverse_padded


def test_pruned_stack_equals_gated_stack():
    torch.manual_seed(0)
    lstm = DenseLSTM(6, 4, 5).eval()
    x = torch.randn(2, 7, 6)
    gates = torch.tensor([1.0, 0.0, 0.7, 0.0, 1.0])
    gated = lstm(x, gates)
    columns = lstm.prune([0, 2, 4])
    pruned = lstm(x, gates[[0, 2, 4]])
    kept = torch.cat([gated[:, :, s] for s in columns], dim=-1)
    assert lstm.depth == 3 and lstm.layer_ids == [0, 2, 4]
    assert torch.allclose(pruned, kept, atol=1e-6)
    assert lstm.flops_per_token() < DenseLSTM(6, 4, 5).flops_per_token()


def test_reverse_padded_reverses_within_length():
    x = torch.arange(8.0).reshape(2, 4, 1)
    out = reverse_padded(x, torch.tensor([4, 2]))[:, :, 0]
    assert out.tolist() == [[3, 2, 1, 0], [5, 4, 6, 7]]


def test_lm_learns_a_repeating_sequence():
    torch.manual_seed(0)
    lm = DenseLM(vocab_size=8, embed_width=8, hidden_width=8, depth=3, proj_width=8, cutoffs=(), layer_dropout=0.3, dropout=0.0)
    ids = torch.tensor([[2, 3, 4, 5, 6], [3, 4, 5, 6, 7]])
    lengths = torch.tensor([5, 5])
    optimizer = torch.optim.Adam(lm.parameters(), lr=0.05)
    first = lm.lm_loss(ids, lengths).item()
    for _ in range(60):
        optimizer.zero_grad()
        loss = lm.lm_loss(ids, lengths)
        loss.backward()
        optimizer.step()
    assert float(loss) < first / 4


def test_r3_turns_off_l1_at_target_and_pushes_to_binary():
    z = torch.tensor([1.0, 0.5, 0.0, 0.0], requires_grad=True)
    r3_penalty(z, target_layers=1).backward()
    # Two gates are non-zero (> target 1): the L1 term pulls both down; zeros stay put.
    assert z.grad.tolist() == [1.0, 1.0, 0.0, 0.0]
    z2 = torch.tensor([0.9, 0.2, 0.0], requires_grad=True)
    r3_penalty(z2, target_layers=2).backward()
    # At the target, only the binary term acts: 0.9 is pushed up, 0.2 down.
    assert z2.grad[0] < 0 < z2.grad[1] and z2.grad[2] == 0
    w = torch.tensor([-0.2, 1.3])
    project_gates(w)
    assert w.tolist() == [0.0, 1.0]


def test_padded_batch_equals_each_sequence_alone():
    """The packed run gives every sequence the outputs it has on its own, and zeros on
    the padding (nothing after a sequence's end is computed)."""
    torch.manual_seed(0)
    lstm = DenseLSTM(5, 3, 3).eval()
    lengths = torch.tensor([6, 2, 4])
    x = torch.randn(3, 6, 5)
    batch = lstm(x, torch.tensor([1.0, 0.5, 1.0]), lengths=lengths)
    for i, n in enumerate(lengths.tolist()):
        alone = lstm(x[i : i + 1, :n], torch.tensor([1.0, 0.5, 1.0]))
        assert torch.allclose(batch[i, :n], alone[0], atol=1e-6)
        assert not batch[i, n:].any()
