"""A small GPT-style language model trained on random tokens, as a PyTorch script writes it:
token and position embeddings, pre-norm transformer blocks with causal self-attention (one
through scaled_dot_product_attention, one through a hand-written masked softmax), a GELU MLP,
weight tying, AdamW with decayed and undecayed groups, gradient clipping, cross-entropy over the
vocabulary; the distributed path is taken only under torchrun, as in nanoGPT; sampling with
temperature, top-k and torch.multinomial."""
import math
import os
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

VOCAB, BLOCK, DIM, HEADS, LAYERS = 32, 16, 32, 4, 2


class CausalSelfAttention(nn.Module):
    def __init__(self, flash):
        super().__init__()
        self.c_attn = nn.Linear(DIM, 3 * DIM)
        self.c_proj = nn.Linear(DIM, DIM)
        self.flash = flash
        self.register_buffer("bias", torch.tril(torch.ones(BLOCK, BLOCK))
                             .view(1, 1, BLOCK, BLOCK))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(DIM, dim=2)
        k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                               is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(DIM, 4 * DIM)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, flash):
        super().__init__()
        self.ln_1 = nn.LayerNorm(DIM)
        self.attn = CausalSelfAttention(flash)
        self.ln_2 = nn.LayerNorm(DIM)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, DIM),
            wpe=nn.Embedding(BLOCK, DIM),
            h=nn.ModuleList([Block(flash=i % 2 == 0) for i in range(LAYERS)]),
            ln_f=nn.LayerNorm(DIM),
        ))
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight   # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * LAYERS))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay = [p for p in param_dict.values() if p.dim() >= 2]
        nodecay = [p for p in param_dict.values() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": nodecay, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)


def get_batch(data, batch_size):
    ix = torch.randint(len(data) - BLOCK, (batch_size,))
    x = torch.stack([data[i:i + BLOCK] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + BLOCK] for i in ix])
    return x, y


def main(steps=20):
    torch.manual_seed(1337)
    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        init_process_group(backend="nccl")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    # nanoGPT's dtype table: it names torch.bfloat16 whichever dtype is picked
    dtype = ("bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported()
             else "float16")
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16,
               "float16": torch.float16}[dtype]
    ctx = nullcontext() if device == "cpu" else torch.amp.autocast(device_type=device,
                                                                   dtype=ptdtype)
    data = torch.randint(VOCAB, (2000,), dtype=torch.long)
    model = GPT().to(device)
    if ddp:
        model = DDP(model, device_ids=[0])
    optimizer = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    losses = []
    for it in range(steps):
        lr = 3e-3 * min(1.0, (it + 1) / 5)   # warmup
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = get_batch(data, 8)
        x, y = x.to(device), y.to(device)
        with ctx:
            _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():   # generate a few tokens, as the script's sampling loop does
        idx = torch.zeros((1, 1), dtype=torch.long, device=device)
        for _ in range(5):
            logits, _ = model(idx[:, -BLOCK:])
            logits = logits[:, -1, :] / 0.8
            v, _ = torch.topk(logits, 5)
            logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
    if ddp:
        destroy_process_group()
    return losses + idx[0].tolist()


if __name__ == "__main__":
    print(main())
