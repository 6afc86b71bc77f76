"""Whole training scripts written the way PyTorch code is written (`import gpugrad as torch`),
mixing the pieces a real project reaches for in one run: data loading, CNN and sequence
models, schedules, mixed-precision plumbing, gradient clipping, checkpoints. Each asserts that
it learns and that a reloaded checkpoint reproduces the model exactly."""
from __future__ import annotations

import io

import numpy as np

import gpugrad as torch
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.utils.data import DataLoader, TensorDataset


def _images(n, device):
    """Two classes of 1x8x8 images: a bright square top-left, or bottom-right."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 1, 8, 8, generator=g) * 0.3
    y = torch.randint(0, 2, (n,), generator=g)
    for i in range(n):
        r = 0 if y[i].item() == 0 else 4
        x[i, 0, r:r + 4, r:r + 4] += 1.0
    return x.to(device), y.to(device)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, padding_mode="reflect"), nn.BatchNorm2d(8), nn.GELU(),
            nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding="same"), nn.SiLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(16, 2))

    def forward(self, x):
        return self.head(self.features(x))


def test_a_cnn_training_script(device):
    torch.manual_seed(0)
    x, y = _images(128, device)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    model = SmallCNN().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=15 * len(loader))
    use_amp = device == "cuda"
    scaler = torch.amp.GradScaler(device, enabled=use_amp)
    first = None
    for _ in range(15):
        model.train()
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device, dtype=torch.float16, enabled=use_amp):
                loss = F.cross_entropy(model(xb), yb, label_smoothing=0.05)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            sched.step()
            first = loss.item() if first is None else first
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    assert accuracy > 0.95 and loss.item() < first
    # a checkpoint round trip reproduces the model and the optimizer exactly
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    buf.seek(0)
    state = torch.load(buf)
    clone = SmallCNN().to(device)
    clone.load_state_dict(state["model"])
    clone.eval()
    with torch.no_grad():
        assert torch.equal(clone(x), model(x))
    opt2 = torch.optim.AdamW(clone.parameters(), lr=3e-3, weight_decay=1e-2)
    opt2.load_state_dict(state["opt"])
    assert opt2.state_dict()["state"].keys() == opt.state_dict()["state"].keys()


class Tagger(nn.Module):
    """Embeddings, a packed bidirectional LSTM, a Transformer encoder layer, a linear head."""

    def __init__(self, vocab, tags, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, dim // 2, batch_first=True, bidirectional=True)
        self.encoder = nn.TransformerEncoderLayer(dim, 2, dim_feedforward=32, dropout=0.0,
                                                  batch_first=True)
        self.out = nn.Linear(dim, tags)

    def forward(self, tokens, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                                   enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True,
                                                total_length=tokens.shape[1])
        h = self.encoder(h, src_key_padding_mask=tokens == 0)
        return self.out(h)


def test_a_sequence_tagging_script(device):
    # tag = the token's parity, so the task is learnable from each token alone
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 9, size=24)
    tokens = np.zeros((24, 8), dtype=np.int64)
    for i, n in enumerate(lengths):
        tokens[i, :n] = rng.integers(1, 20, size=n)
    tags = np.where(tokens > 0, tokens % 2, -100)   # -100: padding, ignored by the loss
    tokens_t, tags_t = torch.tensor(tokens, device=device), torch.tensor(tags, device=device)
    lengths_t = torch.tensor(lengths)
    model = Tagger(20, 2).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=60)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        logits = model(tokens_t, lengths_t)
        loss = nn.CrossEntropyLoss(ignore_index=-100)(logits.reshape(-1, 2), tags_t.reshape(-1))
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    with torch.no_grad():
        pred = model(tokens_t, lengths_t).argmax(-1)
    mask = tags_t != -100
    accuracy = (pred[mask] == tags_t[mask]).float().mean().item()
    assert accuracy > 0.95 and losses[-1] < 0.3 * losses[0]
    # padding never receives gradient through the embedding's padding row
    assert float(model.embed.weight.grad[0].abs().sum()) == 0.0
