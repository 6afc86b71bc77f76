"""A character-level language model as a PyTorch script writes it: text as indices into its
alphabet, an embedding, a two-layer GRU whose hidden state is carried from chunk to chunk and
detached (truncated backpropagation through time), a linear decoder, Adam with a step schedule,
gradient clipping, then greedy sampling. An RNN variant of
the same model trains for a few steps too."""
import string

import torch
import torch.nn as nn
import torch.nn.functional as F

CHARS = string.ascii_lowercase + " .,"
SEQ, BATCH = 12, 4


class CharRNN(nn.Module):
    def __init__(self, n_chars, hidden=48, layers=2, cell="gru"):
        super().__init__()
        self.encoder = nn.Embedding(n_chars, 16)
        rnn = nn.GRU if cell == "gru" else nn.RNN
        self.rnn = rnn(16, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(hidden, n_chars)
        self.hidden, self.layers = hidden, layers

    def forward(self, x, h):
        out, h = self.rnn(self.encoder(x), h)
        return self.decoder(out.reshape(-1, self.hidden)), h

    def init_hidden(self, batch):
        return torch.zeros(self.layers, batch, self.hidden)


def batches(data):
    """Consecutive chunks of each of BATCH parallel streams (so the hidden state carries)."""
    n = (len(data) - 1) // BATCH
    streams = data[:n * BATCH].view(BATCH, n)
    targets = data[1:n * BATCH + 1].view(BATCH, n)
    for i in range(0, n - SEQ + 1, SEQ):
        yield streams[:, i:i + SEQ], targets[:, i:i + SEQ]


def train(cell, epochs):
    text = "".join(CHARS[i] for i in torch.randint(len(CHARS), (400,)).tolist())
    data = torch.tensor([CHARS.index(c) for c in text], dtype=torch.long)
    model = CharRNN(len(CHARS), cell=cell)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        hidden = model.init_hidden(BATCH)
        for x, y in batches(data):
            hidden = hidden.detach()
            optimizer.zero_grad()
            output, hidden = model(x, hidden)
            loss = criterion(output, y.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    with torch.no_grad():
        h = model.init_hidden(1)
        idx = torch.tensor([[CHARS.index("t")]])
        out = []
        for _ in range(10):
            logits, h = model(idx, h)
            idx = F.softmax(logits, dim=-1).argmax(dim=-1, keepdim=True)
            out.append(CHARS[idx.item()])
    return losses


def main():
    torch.manual_seed(0)
    return train("gru", epochs=2) + train("rnn", epochs=1)


if __name__ == "__main__":
    print(main())
