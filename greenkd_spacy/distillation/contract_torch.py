"""The contract's KL as a node of a torch graph.

The labeller's student distribution is its CRF's per-token tag marginals, themselves
differentiated through the forward algorithm, so its KL term must sit in the torch
graph that `backward` runs through. The formula stays the contract's one
(contract.kl_divergence, numpy): this node computes it on the values and hands its
gradient back to torch, so every component learns from the same T^2 KL and a change to
it reaches them all. Kept apart from contract.py so that the contract imports no torch.
"""
from typing import Any, Optional, Tuple

import torch
from torch.autograd.function import once_differentiable

from .contract import kl_divergence


class _TemperedKL(torch.autograd.Function):
    """contract.kl_divergence forward; its gradient with respect to the student backward."""

    @staticmethod
    def forward(ctx: Any, teacher_logprobs: torch.Tensor, student_logits: torch.Tensor, mask: torch.Tensor, temperature: float) -> torch.Tensor:
        loss, grad = kl_divergence(
            teacher_logprobs.detach().cpu().numpy(),
            student_logits.detach().cpu().numpy(),
            mask.detach().cpu().numpy().astype(bool),
            temperature,
        )
        ctx.grad = torch.from_numpy(grad).to(student_logits.device)
        return student_logits.new_tensor(loss)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, d_loss: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        return None, d_loss * ctx.grad, None, None


def kl_divergence_torch(
    teacher_logprobs: torch.Tensor, student_logits: torch.Tensor, mask: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """T^2 * KL(teacher_T || student_T), averaged over the positions in mask, as a torch
    scalar: contract.kl_divergence's value and, with respect to the student logits, its
    gradient (the teacher gets none).

    teacher_logprobs (torch.Tensor): (..., C) teacher log-probabilities at T = 1.
    student_logits (torch.Tensor): (..., C) student logits (or log-probabilities).
    mask (torch.Tensor): (...) bool, positions that count.
    temperature (float): T, applied to both sides.
    RETURNS (torch.Tensor): The loss, a 0-d tensor.
    """
    return _TemperedKL.apply(teacher_logprobs, student_logits, mask, float(temperature))
