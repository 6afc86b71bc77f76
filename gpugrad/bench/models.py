"""Real-model cases: one training step of a model as a PyTorch script writes it, the same code
run by gpugrad and by PyTorch (``T`` is the library), from the same weights and batches.

``gpt``: a GPT-style block stack (nanoGPT's shape): token and position embeddings, pre-norm
blocks with causal self-attention (the masked softmax written out, as nanoGPT's non-flash path),
exact-GELU MLP, a tied-free LM head, cross-entropy over the vocabulary, AdamW."""
from __future__ import annotations

import math

import numpy as np

GPT = {"vocab": 256, "context": 64, "width": 128, "heads": 4, "layers": 2, "batch": 8}


def gpt_model(T, vocab, context, width, heads, layers):
    """The model class built on library ``T`` (gpugrad or torch): one definition for both."""
    nn, F = T.nn, T.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.register_buffer("mask", T.tril(T.ones(context, context))
                                 .view(1, 1, context, context))

        def forward(self, x):
            B, S, C = x.shape
            q, k, v = self.qkv(x).split(width, dim=2)
            q, k, v = (a.view(B, S, heads, C // heads).transpose(1, 2) for a in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // heads))
            att = att.masked_fill(self.mask[:, :, :S, :S] == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(B, S, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn = nn.LayerNorm(width), Attention()
            self.ln2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

        def forward(self, idx, targets):
            pos = T.arange(idx.shape[1], device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return Model()


def gpt_step(T, device, vocab, context, width, heads, layers, batch, seed=0):
    """One AdamW training step of the GPT model on library ``T``: weights and token batches
    drawn from numpy with ``seed``, so both libraries train the same model on the same data."""
    T.manual_seed(seed)
    model = gpt_model(T, vocab, context, width, heads, layers).to(device)
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if name.endswith("bias"):
                w = np.zeros(shape, np.float32)
            elif ".ln" in name or name.startswith("ln"):
                w = np.ones(shape, np.float32)
            else:
                w = (rng.standard_normal(shape) * 0.02).astype(np.float32)
            p.copy_(T.as_tensor(w, device=device))
    tokens = rng.integers(0, vocab, (batch, context + 1))
    idx = T.as_tensor(np.ascontiguousarray(tokens[:, :-1]), device=device)
    targets = T.as_tensor(np.ascontiguousarray(tokens[:, 1:]), device=device)
    opt = T.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(idx, targets)
        loss.backward()
        opt.step()
        return loss
    step.model = model
    return step
