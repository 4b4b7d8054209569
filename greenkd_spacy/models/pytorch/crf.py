"""A first-order linear-chain CRF over padded batches (ld-net-lm-pruning.md, eq. 8).

Training uses the forward algorithm (log-partition minus the gold path's score);
decoding uses Viterbi; per-token marginals, which distillation matches between teacher
and student, are the gradient of the log-partition with respect to the emissions. That
gradient is the forward-backward algorithm, written out (`_LogPartition`): autograd
through the forward loop records a dozen small operations per position and replays them
backwards, which cost several times the forward pass. Where a gradient of the marginals
themselves is needed (a student matching a teacher's marginals), the log-partition runs
through autograd instead, which can differentiate twice.

A constraint matrix forbids transitions that no valid tag sequence has (for BILUO:
``O -> I-PER``, ``B-PER -> O``...): those get a large negative score, so Viterbi always
returns a well-formed sequence and the model spends no mass on impossible ones.
"""
from typing import List, Optional, Sequence, Tuple

import numpy
import torch
from torch import nn
from torch.autograd.function import once_differentiable

try:  # built by `pip install` (setup.py); the torch method is the fallback
    from ...decoding._viterbi import viterbi_batch as _compiled_viterbi
except ImportError:  # pragma: no cover - an unbuilt source checkout
    _compiled_viterbi = None

FORBIDDEN = -1e4


def biluo_constraints(labels: Sequence[str]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Allowed transitions between BILUO tags (spaCy's name for BIOES: L = E, U = S).

    labels: Tags such as "O", "B-PER", "I-PER", "L-PER", "U-PER".
    RETURNS: (transitions (C, C) from row to column, start (C,), end (C,)) as bool masks.
    """
    n = len(labels)
    parts = [(tag.split("-", 1) + [""])[:2] if tag != "O" else ["O", ""] for tag in labels]
    allowed = torch.zeros((n, n), dtype=torch.bool)
    for i, (prev, prev_type) in enumerate(parts):
        for j, (nxt, nxt_type) in enumerate(parts):
            if prev in ("B", "I"):
                allowed[i, j] = nxt in ("I", "L") and nxt_type == prev_type
            else:
                allowed[i, j] = nxt in ("O", "B", "U")
    start = torch.tensor([p in ("O", "B", "U") for p, _ in parts], dtype=torch.bool)
    end = torch.tensor([p in ("O", "L", "U") for p, _ in parts], dtype=torch.bool)
    return allowed, start, end


class LinearChainCRF(nn.Module):
    """Transition scores plus start/end scores; emissions come from the caller."""

    def __init__(self, n_labels: int, constraints: Optional[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = None):
        super().__init__()
        self.n_labels = n_labels
        self.transitions = nn.Parameter(torch.zeros(n_labels, n_labels))
        self.start = nn.Parameter(torch.zeros(n_labels))
        self.end = nn.Parameter(torch.zeros(n_labels))
        if constraints is None:
            constraints = (
                torch.ones((n_labels, n_labels), dtype=torch.bool),
                torch.ones(n_labels, dtype=torch.bool),
                torch.ones(n_labels, dtype=torch.bool),
            )
        allowed, start, end = constraints
        self.register_buffer("trans_mask", torch.where(allowed, 0.0, FORBIDDEN).float())
        self.register_buffer("start_mask", torch.where(start, 0.0, FORBIDDEN).float())
        self.register_buffer("end_mask", torch.where(end, 0.0, FORBIDDEN).float())

    def _scores(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.transitions + self.trans_mask, self.start + self.start_mask, self.end + self.end_mask

    def log_partition(self, emissions: torch.Tensor, lengths: torch.Tensor, twice: bool = False) -> torch.Tensor:
        """log Z per sequence. emissions: (B, T, C); lengths: (B,), each >= 1.

        Each step is one (n, C) x (C, C) product in probability space, each row scaled
        by its max first (log-sum-exp without the (B, C, C) tensor of every pair of
        tags, which made the forward algorithm and its backward most of a distillation
        step of a 73-tag labeller), and only over the sequences still running: they are
        taken longest first, so those are a prefix of the batch. The gradient is the
        forward-backward algorithm's (`_LogPartition`); with `twice`, autograd's through
        the same loop, so that the gradient can be differentiated again.
        """
        trans, start, end = self._scores()
        batch = emissions.shape[0]
        if batch == 0:
            return emissions.new_zeros((0,))
        order = torch.argsort(lengths, descending=True, stable=True)
        emissions = emissions[order]
        sorted_lengths = lengths[order]
        if not twice:
            log_z = _LogPartition.apply(emissions, trans, start, end, sorted_lengths)
            return log_z[torch.argsort(order)]
        shift = trans.max().detach()
        # Forbidden transitions (FORBIDDEN = -1e4) become exact zeros.
        weights = torch.exp(trans - shift)
        alpha = start[None, :] + emissions[:, 0]
        for t in range(1, int(sorted_lengths[0])):
            n = int((sorted_lengths > t).sum())
            running = alpha[:n]
            top = running.max(dim=1, keepdim=True).values.detach()
            step = torch.log(torch.exp(running - top) @ weights + 1e-30) + top + shift + emissions[:n, t]
            alpha = torch.cat([step, alpha[n:]]) if n < batch else step
        log_z = torch.logsumexp(alpha + end[None, :], dim=1)
        # Back to the caller's order.
        return log_z[torch.argsort(order)]

    def path_score(self, emissions: torch.Tensor, tags: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Score of the given tag sequences (B, T) (padding positions are ignored)."""
        trans, start, end = self._scores()
        batch, max_len, _ = emissions.shape
        mask = torch.arange(max_len)[None, :] < lengths[:, None]
        tags = torch.where(mask, tags, torch.zeros_like(tags))
        emit = emissions.gather(2, tags[:, :, None]).squeeze(2)
        score = start[tags[:, 0]] + (emit * mask).sum(1)
        if max_len > 1:
            steps = trans[tags[:, :-1], tags[:, 1:]]
            score = score + (steps * mask[:, 1:]).sum(1)
        last = tags.gather(1, (lengths - 1)[:, None]).squeeze(1)
        return score + end[last]

    def nll(self, emissions: torch.Tensor, tags: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Negative log-likelihood of the gold sequences, one value per sequence."""
        return self.log_partition(emissions, lengths) - self.path_score(emissions, tags, lengths)

    def marginals(self, emissions: torch.Tensor, lengths: torch.Tensor, create_graph: bool = False) -> torch.Tensor:
        """p(y_t = c | x) for every position, (B, T, C); zero on padding.

        With create_graph the result stays differentiable in the emissions (the student
        side of marginal distillation); otherwise it is detached.
        """
        with torch.enable_grad():
            source = emissions if create_graph else emissions.detach().requires_grad_(True)
            log_z = self.log_partition(source, lengths, twice=create_graph).sum()
            (grad,) = torch.autograd.grad(log_z, source, create_graph=create_graph)
        mask = torch.arange(emissions.shape[1])[None, :] < lengths[:, None]
        return grad * mask[:, :, None]

    @torch.no_grad()
    def viterbi(self, emissions: torch.Tensor, lengths: torch.Tensor) -> List[List[int]]:
        """Best tag sequence per sequence, as lists of tag indices (`viterbi_padded`)."""
        padded = self.viterbi_padded(emissions, lengths)
        return [row[:n] for row, n in zip(padded.tolist(), lengths.tolist())]

    @torch.no_grad()
    def viterbi_padded(self, emissions: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Best tag sequence per sequence as a (B, T) tensor of tag indices, 0 past each
        sequence's end: by the compiled decoder (decoding/_viterbi.pyx, visiting allowed
        transitions only) where it is built, else by `viterbi_reference`; the paths are
        the same."""
        if _compiled_viterbi is None or emissions.shape[0] == 0:
            padded = torch.zeros(emissions.shape[:2], dtype=torch.long)
            for i, path in enumerate(self.viterbi_reference(emissions, lengths)):
                padded[i, : len(path)] = torch.tensor(path, dtype=torch.long)
            return padded
        trans, start, end = (score.detach() for score in self._scores())
        allowed, n_allowed = self._allowed_into()
        tags = _compiled_viterbi(
            emissions.detach().float().contiguous().numpy(),
            lengths.to(torch.int64).contiguous().numpy(),
            trans.t().contiguous().numpy(), start.contiguous().numpy(), end.contiguous().numpy(),
            allowed, n_allowed,
        )
        return torch.from_numpy(tags)

    def _allowed_into(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """For each tag, the previous tags a transition into it may come from (by the
        constraint mask; every tag where a tag has none), in ascending order and padded:
        (C, C) and counts (C,). Derived from the mask on each call (a C x C sort), so a
        mask loaded in place is never read stale."""
        ok = numpy.array((self.trans_mask == 0).t().numpy())  # ok[next, prev]
        ok[~ok.any(axis=1)] = True
        allowed = numpy.argsort(~ok, axis=1, kind="stable").astype(numpy.int64)
        return numpy.ascontiguousarray(allowed), ok.sum(axis=1).astype(numpy.int64)

    def viterbi_reference(self, emissions: torch.Tensor, lengths: torch.Tensor) -> List[List[int]]:
        """Best tag sequence per sequence, as lists of tag indices (in torch).

        Sequences are taken longest first, so at each step the ones still running are a
        prefix of the batch and only they are scored: the work is the batch's words
        times C^2, not its padded size (a batch of sentences of mixed length is mostly
        padding at its last steps). The max runs over the last, contiguous axis.
        """
        trans, start, end = self._scores()
        batch, max_len, _ = emissions.shape
        if batch == 0:
            return []
        given, lengths = lengths, lengths.clamp(min=1)
        order = torch.argsort(lengths, descending=True, stable=True)
        emissions = emissions[order]
        sorted_lengths = lengths[order]
        # into[next, prev]: the score of moving from prev to next.
        into = trans.t().contiguous()[None]
        score = start[None, :] + emissions[:, 0]
        backpointers = []
        for t in range(1, int(sorted_lengths[0])):
            n = int((sorted_lengths > t).sum())
            best, arg = (score[:n, None, :] + into).max(dim=2)
            score = torch.cat([best + emissions[:n, t], score[n:]])
            backpointers.append(arg)
        last = (score + end[None, :]).argmax(dim=1)
        tags = torch.zeros((batch, max_len), dtype=torch.long)
        for t in range(len(backpointers), 0, -1):
            pointers = backpointers[t - 1]
            n = pointers.shape[0]
            tags[:n, t] = last[:n]
            last = torch.cat([pointers.gather(1, last[:n, None]).squeeze(1), last[n:]])
        tags[:, 0] = last
        paths: List[List[int]] = [[] for _ in range(batch)]
        for i, row in zip(order.tolist(), tags.tolist()):
            paths[i] = row[: int(given[i])]
        return paths


class _LogPartition(torch.autograd.Function):
    """log Z of sequences sorted longest first, with the forward-backward algorithm as
    its backward: the gradient of log Z is each position's tag marginals (emissions,
    start, end) and the expected count of each transition (transitions).

    Both passes work in probability space, one (n, C) x (C, C) product per position with
    each row scaled by its max, over the n sequences still running (a prefix of the
    batch). The expected transition counts are summed over the batch as one (C, n) x
    (n, C) product per position, in float64: each row's scale, exp(max alpha + max beta
    - log Z), can be large where the best tags before and after a position may not
    follow one another, and its small counterparts would underflow in float32.
    """

    @staticmethod
    def forward(ctx, emissions, trans, start, end, lengths):  # type: ignore[override]
        batch, _, n_tags = emissions.shape
        n_steps = int(lengths[0])
        # running[t]: how many sequences are longer than t (a prefix of the batch)
        running = (lengths[None, :] > torch.arange(n_steps)[:, None]).sum(1).tolist()
        shift = trans.max()
        weights = torch.exp(trans - shift)
        alphas = emissions.new_empty((n_steps, batch, n_tags))
        alphas[0] = start[None, :] + emissions[:, 0]
        for t in range(1, n_steps):
            n = running[t]
            prev = alphas[t - 1, :n]
            top = prev.max(dim=1, keepdim=True).values
            # No epsilon inside the log, unlike the autograd loop (where log 0 would make
            # NaN gradients): a tag no allowed path reaches gets -inf, and so exactly no
            # mass in the backward pass.
            alphas[t, :n] = torch.log(torch.exp(prev - top) @ weights) + top + shift + emissions[:n, t]
        last = alphas[lengths - 1, torch.arange(batch)]
        log_z = torch.logsumexp(last + end[None, :], dim=1)
        ctx.save_for_backward(emissions, weights, end, alphas, last, log_z)
        ctx.running = running
        ctx.shift = float(shift)
        return log_z

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_log_z):  # type: ignore[override]
        emissions, weights, end, alphas, last, log_z = ctx.saved_tensors
        running, shift = ctx.running, ctx.shift
        batch, _, n_tags = emissions.shape
        grad = grad_log_z[:, None]
        d_emissions = torch.zeros_like(emissions)
        counts = torch.zeros((n_tags, n_tags), dtype=torch.float64)
        # beta at each sequence's last position is the end score; a sequence joins the
        # recursion when t reaches its last position.
        beta = end[None, :].expand(batch, n_tags).clone()
        weights_t = weights.t()
        for t in range(len(running) - 1, -1, -1):
            n = running[t]
            d_emissions[:n, t] = torch.exp(alphas[t, :n] + beta[:n] - log_z[:n, None]) * grad[:n]
            if t == 0:
                break
            right = emissions[:n, t] + beta[:n]
            right_top = right.max(dim=1, keepdim=True).values
            right_p = torch.exp(right - right_top)
            prev = alphas[t - 1, :n]
            prev_top = prev.max(dim=1, keepdim=True).values
            scale = torch.exp((prev_top + right_top + shift - log_z[:n, None]).double()) * grad[:n].double()
            counts += (torch.exp(prev - prev_top).double() * scale).t() @ right_p.double()
            beta[:n] = torch.log(right_p @ weights_t) + right_top + shift
        d_trans = weights * counts.to(weights.dtype)
        d_start = d_emissions[:, 0].sum(0)
        d_end = (torch.exp(last + end[None, :] - log_z[:, None]) * grad).sum(0)
        return d_emissions, d_trans, d_start, d_end, None
