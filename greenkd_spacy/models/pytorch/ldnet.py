"""LD-Net's sequence labeller (ld-net-lm-pruning.md, section 3, Fig. 4) in torch.

`LDNetEncoder`: a context-aware character LSTM (one forward and one backward LSTM over
the sentence's characters; a word is read at the space after it, forward, and at the
space before it, backward), hashed word embeddings w_t, and optionally the densely
connected LM whose two directions are combined into r_t = ReLU(W_cr [h_t, h^r_t]) (eq. 5);
v_t = [c*_t; r_t; w_t] goes through a word-level BiLSTM. Without an LM it is the paper's
NoLM baseline, v_t = [c*_t; w_t].

`CRFHead`: a linear map from any token vectors to emissions, and the CRF on top.
"""
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn

from ...distillation.contract_torch import kl_divergence_torch
from .crf import LinearChainCRF
from .dense_lm import DenseLM, project_gates, r3_penalty, reverse_padded


def pad_flat(flat: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """(N, W) rows of B sequences -> (B, T, W) left-aligned, zero padded."""
    batch, max_len = lengths.shape[0], int(lengths.max()) if lengths.numel() else 0
    out = flat.new_zeros((batch, max_len, flat.shape[1]))
    mask = torch.arange(max_len)[None, :] < lengths[:, None]
    out[mask] = flat
    return out


# Sentences per character-LSTM call (see LDNetEncoder._chars).
CHAR_GROUP = 32


def run_packed(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Run a batch-first LSTM over left-aligned sequences without computing the padding.

    Packing skips the padding steps (same outputs at the real positions, zeros after
    them).
    """
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.clamp(min=1), batch_first=True, enforce_sorted=False)
    out, _ = lstm(packed)
    return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]


class LDNetEncoder(nn.Module):
    def __init__(
        self,
        word_rows: int,
        word_width: int,
        char_rows: int,
        char_width: int,
        char_hidden: int,
        hidden_width: int,
        dropout: float,
        lm: Optional[DenseLM] = None,
    ):
        super().__init__()
        self.word_embed = nn.Embedding(word_rows, word_width)
        self.char_embed = nn.Embedding(char_rows, char_width)
        self.char_fwd = nn.LSTM(char_width, char_hidden, batch_first=True)
        self.char_bwd = nn.LSTM(char_width, char_hidden, batch_first=True)
        self.char_proj = nn.Linear(2 * char_hidden, word_width)
        self.lm = lm
        n_in = 2 * word_width
        if lm is not None:
            for p in lm.parameters():  # the pretrained LM is used as is (plug-in)
                p.requires_grad_(False)
            lm_out = lm.forward_lstm.out_width + lm.backward_lstm.out_width
            self.contextual = nn.Linear(lm_out, word_width)
            self.gates = nn.ParameterDict(
                {
                    "fwd": nn.Parameter(torch.ones(lm.forward_lstm.depth)),
                    "bwd": nn.Parameter(torch.ones(lm.backward_lstm.depth)),
                }
            )
            n_in += word_width
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(n_in, hidden_width, batch_first=True, bidirectional=True)
        self.out_width = 2 * hidden_width

    def set_dropout(self, rate: float) -> None:
        self.dropout.p = rate

    def _chars(self, char_ids: torch.Tensor, char_lengths: torch.Tensor, fwd_pos: torch.Tensor, bwd_pos: torch.Tensor) -> torch.Tensor:
        """Character LSTM states at each word's boundaries, (B, T_words, word_width).

        A sentence's characters run to hundreds of steps, and a batch padded to its
        longest sentence spends most LSTM steps on padding. Sentences are therefore run
        in groups of similar length, each padded only to its own longest (outputs at
        the real positions are unchanged: padding only ever follows them).
        """
        order = torch.argsort(char_lengths, descending=True)
        picked = []
        for start in range(0, len(order), CHAR_GROUP):
            rows = order[start : start + CHAR_GROUP]
            lengths = char_lengths[rows].clamp(min=1)
            x = self.dropout(self.char_embed(char_ids[rows, : int(lengths.max())]))
            fwd, _ = self.char_fwd(x)
            bwd = reverse_padded(self.char_bwd(reverse_padded(x, lengths))[0], lengths)
            pick_f = fwd.gather(1, fwd_pos[rows][:, :, None].expand(-1, -1, fwd.shape[2]))
            pick_b = bwd.gather(1, bwd_pos[rows][:, :, None].expand(-1, -1, bwd.shape[2]))
            picked.append(torch.cat([pick_f, pick_b], dim=-1))
        states = torch.cat(picked)[torch.argsort(order)]  # back to the batch's order
        return self.char_proj(states)

    def forward(
        self,
        word_ids: torch.Tensor,
        char_ids: torch.Tensor,
        char_lengths: torch.Tensor,
        fwd_pos: torch.Tensor,
        bwd_pos: torch.Tensor,
        lm_ids: torch.Tensor,
        lengths: torch.Tensor,
    ) -> torch.Tensor:
        """All inputs left-aligned and padded; returns flat (N, out_width) rows."""
        if int(lengths.sum()) == 0:
            return torch.zeros((0, self.out_width))
        parts = [self._chars(char_ids, char_lengths, fwd_pos, bwd_pos)]
        if self.lm is not None:
            self.lm.eval()  # frozen: no LM dropout or layer dropout while labelling
            outputs = self.lm.directions(lm_ids, lengths, gates=dict(self.gates))
            parts.append(torch.relu(self.contextual(torch.cat([outputs["fwd"], outputs["bwd"]], dim=-1))))
        parts.append(self.word_embed(word_ids))
        v = self.dropout(torch.cat(parts, dim=-1))
        u = run_packed(self.lstm, v, lengths)
        mask = torch.arange(v.shape[1])[None, :] < lengths[:, None]
        return self.dropout(u)[mask]

    # -------------------------------------------------------------- layer selection

    def gate_values(self) -> Dict[str, List[float]]:
        if self.lm is None:
            return {}
        return {name: [round(float(z), 4) for z in gate.detach()] for name, gate in self.gates.items()}

    def train_gates(self, on: bool) -> None:
        """Gates learn only during layer selection. Otherwise they take no gradient, and
        since the LM's own weights are frozen, autograd then records nothing inside the
        LM: its backward pass (through every layer of both directions) is skipped."""
        if self.lm is not None:
            for gate in self.gates.values():
                gate.requires_grad_(on)

    def r3(self, target_layers: float) -> torch.Tensor:
        """R3 over all gates of both directions together (lambda_1 counts both)."""
        z = torch.cat([self.gates["fwd"], self.gates["bwd"]])
        return r3_penalty(z, target_layers)

    def project(self) -> None:
        if self.lm is not None:
            for gate in self.gates.values():
                project_gates(gate)

    def prune(self) -> Tuple[int, int]:
        """Delete every LM layer whose gate is 0 (and its columns in W_cr).
        RETURNS (flops before, flops after) of the LM per token."""
        if self.lm is None:
            return 0, 0
        before = self.lm_flops_per_token()
        keep = {name: [i for i, z in enumerate(gate.tolist()) if z > 0] for name, gate in self.gates.items()}
        # W_cr reads [forward output, backward output] in the old layout.
        offset = self.lm.forward_lstm.out_width
        columns = self.lm.prune_layers(keep)
        index = torch.cat(
            [torch.arange(s.start, s.stop) for s in columns["fwd"]]
            + [torch.arange(offset + s.start, offset + s.stop) for s in columns["bwd"]]
        )
        new = nn.Linear(len(index), self.contextual.out_features)
        with torch.no_grad():
            new.weight.copy_(self.contextual.weight[:, index])
            new.bias.copy_(self.contextual.bias)
        self.contextual = new
        self.gates = nn.ParameterDict(
            {name: nn.Parameter(gate.detach()[keep[name]].clone()) for name, gate in self.gates.items()}
        )
        return before, self.lm_flops_per_token()

    def lm_flops_per_token(self) -> int:
        """Multiply-adds per token of the LM as the labeller runs it: both directions'
        recurrent layers plus the contextual projection W_cr (eq. 5)."""
        if self.lm is None:
            return 0
        return self.lm.flops_per_token() + self.contextual.in_features * self.contextual.out_features


class CRFHead(nn.Module):
    """Emissions from token vectors, then the CRF (training loss, decoding, marginals)."""

    def __init__(self, n_in: int, n_labels: int, constraints, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(n_in, n_labels)
        self.crf = LinearChainCRF(n_labels, constraints)

    def set_dropout(self, rate: float) -> None:
        self.dropout.p = rate

    def emissions(self, flat: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return pad_flat(self.linear(self.dropout(flat)), lengths)

    def forward(
        self,
        flat: torch.Tensor,
        lengths: torch.Tensor,
        gold: Optional[torch.Tensor] = None,
        gold_rows: Optional[torch.Tensor] = None,
        teacher: Optional[torch.Tensor] = None,
        temperature: float = 1.0,
        gold_weight: float = 1.0,
        marginals: bool = False,
        gold_row_weights: Optional[torch.Tensor] = None,
        normalize: bool = True,
    ):
        """Without targets: (best paths (B, T), marginals (B, T, C) if asked for, else
        None). With gold tags
        and/or teacher marginals: the training loss (see normalize), as a scalar.

        gold: (B, T) tag indices; gold_rows: (B,) bool, the sequences that have gold;
            gold_row_weights: (B,) float, each sequence's weight in the gold term
            (None: 1 each).
        normalize: the gold term is the mean of the sequences' NLL and the KL the mean
            over tokens (True), or each is the sum (False: the scale of spaCy's own
            components' losses, for a shared encoder). Summed, both terms count per
            token, so gold_weight weighs a gold token against a teacher's token, where
            averaged it weighs a whole gold sequence against one.
        teacher: (B, T, C) teacher marginals; the loss adds T^2 KL(teacher_T || student_T)
            per token (marginals tempered as p^(1/T), renormalised): the distillation
            contract's KL, on the log-marginals.
        """
        nonempty = lengths > 0
        emissions = self.emissions(flat, lengths)
        safe_lengths = lengths.clamp(min=1)
        if gold is None and teacher is None:
            if emissions.shape[1] == 0:
                return torch.zeros((lengths.shape[0], 0), dtype=torch.long), emissions if marginals else None
            padded = self.crf.viterbi_padded(emissions, safe_lengths) * nonempty[:, None]
            if not marginals:
                return padded, None
            return padded, self.crf.marginals(emissions, safe_lengths) * nonempty[:, None, None]
        loss = emissions.sum() * 0.0
        if gold is not None and gold_rows is not None and bool((gold_rows & nonempty).any()):
            rows = gold_rows & nonempty
            nll = self.crf.nll(emissions[rows], gold[rows], lengths[rows])
            if gold_row_weights is not None:
                nll = nll * gold_row_weights[rows]
            loss = loss + gold_weight * (nll.mean() if normalize else nll.sum())
        if teacher is not None and bool(nonempty.any()):
            rows = nonempty
            student = self.crf.marginals(emissions[rows], lengths[rows], create_graph=True)
            mask = torch.arange(emissions.shape[1])[None, :] < lengths[rows][:, None]
            # log p / T, renormalised, is p^(1/T) renormalised: the contract tempers
            # log-probabilities, and the marginals' gradient flows through the logs.
            teacher_logprobs = torch.log(teacher[rows].clamp(min=1e-8))
            student_logprobs = torch.log(student.clamp(min=1e-8))
            kl = kl_divergence_torch(teacher_logprobs, student_logprobs, mask, temperature)
            loss = loss + (kl if normalize else kl * mask.sum())
        return loss
