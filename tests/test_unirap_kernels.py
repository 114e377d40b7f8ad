"""Chapter 10 (UniRAP): the model's cheaper steps (session 84, issue 41) give the numbers of the plain ops to the bit:
the strided ``unfold``, the token context added to its pixels (:class:`~explorables.unirap.model._AddContext`) and
the mask-weighted pooling (:class:`~explorables.unirap.model._Pool`), each forward and gradient, and the whole model's
outputs and every parameter's gradient against the model built from the plain ops."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from explorables.unirap import model as model_module
from explorables.unirap.model import UniRAP, _AddContext, _Pool, unfold


def _grads(out: torch.Tensor, inputs: list[torch.Tensor], seed: int = 5) -> list[torch.Tensor]:
    upstream = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed))
    return list(torch.autograd.grad(out, inputs, upstream))


@pytest.mark.parametrize("k,padding,stride,size", [(4, 0, 4, 32), (3, 1, 1, 32), (3, 1, 1, 8), (3, 1, 1, 12),
                                                   (4, 0, 4, 16), (3, 0, 1, 9), (3, 1, 2, 10)])
@pytest.mark.parametrize("contiguous", [True, False])
def test_strided_unfold_is_f_unfold_to_the_bit(k, padding, stride, size, contiguous):
    base = torch.randn(3, 7, size, size, generator=torch.Generator().manual_seed(size + k))
    x = base if contiguous else base.transpose(-1, -2).contiguous().transpose(-1, -2)  # the same values, strided
    assert x.is_contiguous() == contiguous
    x = x.requires_grad_()
    ours, ref = unfold(x, k, padding, stride), F.unfold(x, k, padding=padding, stride=stride)
    assert ours.shape == ref.shape and torch.equal(ours, ref)
    assert torch.equal(_grads(ours, [x])[0], _grads(ref, [x])[0])


def test_token_context_added_to_its_pixels_is_the_broadcast_sum_to_the_bit():
    gen = torch.Generator().manual_seed(3)
    local = (torch.randn(2, 6, 8, 4, 8, 4, generator=gen) * 10 ** torch.randn(2, 6, 8, 4, 8, 4, generator=gen))
    context = torch.randn(2, 6, 8, 8, generator=gen) * 100
    local.requires_grad_(), context.requires_grad_()
    ours, ref = _AddContext.apply(local, context), local + context[:, :, :, None, :, None]
    assert ours.shape == ref.shape and torch.equal(ours, ref)
    # a heavy-tailed upstream gradient: the two sums must add in autograd's order, not only to rounding
    upstream = torch.randn(ref.shape, generator=gen) * 10 ** (3 * torch.randn(ref.shape, generator=gen))
    for a, b in zip(torch.autograd.grad(ours, [local, context], upstream),
                    torch.autograd.grad(ref, [local, context], upstream), strict=True):
        assert a.shape == b.shape and torch.equal(a, b)


def test_pooled_features_and_their_gradients_are_the_matrix_products_to_the_bit():
    gen = torch.Generator().manual_seed(4)
    a = torch.rand(3, 5, 2, 64, generator=gen).requires_grad_()
    features = torch.randn(3, 5, 16, 64, generator=gen).requires_grad_()
    ours, ref = _Pool.apply(a, features), a @ features.transpose(-1, -2)
    assert torch.equal(ours, ref)
    for x, y in zip(_grads(ours, [a, features]), _grads(ref, [a, features]), strict=True):
        assert x.shape == y.shape and torch.equal(x, y)


@pytest.mark.parametrize("arch", ["unified", ("unified", "pose_direct"), "separate"])
def test_the_model_gives_the_plain_ops_numbers_and_gradients_to_the_bit(monkeypatch, arch):
    """A training step's outputs and every parameter's gradient, with the cheaper steps and with the plain ops."""
    seeds = [11, 12]
    images = torch.rand(2, 3, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    tokens = torch.randint(1, 30, (2, 3, 6), generator=torch.Generator().manual_seed(2))

    def step() -> tuple[dict, dict]:
        net = UniRAP(seeds, arch=arch)
        out = net(images, tokens)
        loss = sum((v.float() ** 2).mean() * (i + 1) for i, v in enumerate(out.values()))
        loss.backward()
        return ({k: v.detach() for k, v in out.items()},
                {k: p.grad for k, p in net.named_parameters() if p.grad is not None})

    ours = step()
    monkeypatch.setattr(model_module, "unfold", lambda t, k, p, s: F.unfold(t, k, padding=p, stride=s))
    monkeypatch.setattr(model_module._AddContext, "apply", staticmethod(lambda l, c: l + c[:, :, :, None, :, None]))
    monkeypatch.setattr(model_module._Pool, "apply", staticmethod(lambda a, f: a @ f.transpose(-1, -2)))
    plain = step()
    for got, want in zip(ours, plain, strict=True):
        assert got.keys() == want.keys()
        for key in want:
            assert torch.equal(got[key], want[key]), key
