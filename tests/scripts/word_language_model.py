"""A word-level language model as PyTorch's examples write it (word_language_model): a corpus
tokenized into a dictionary with <eos>, batchified into columns, an embedding, a two-layer LSTM,
a linear decoder whose weight is tied to the embedding's, truncated backpropagation through
time with the hidden state detached between batches (repackage_hidden), gradient clipping, an
evaluation pass under eval() / no_grad() after each epoch and the learning rate divided by 4
when the validation loss stops improving. Dropout is off (parity needs it), and the update is
an SGD optimizer's step where the example writes it by hand."""
import math

import torch
import torch.nn as nn

WORDS = ("the a cat dog sat ran on under mat log quickly slowly and then it was big small red "
         "blue").split()
BPTT, BATCH, EVAL_BATCH = 7, 4, 2


class Dictionary:
    def __init__(self):
        self.word2idx, self.idx2word = {}, []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    """Sentences drawn at random from WORDS stand in for the example's train/valid files."""

    def __init__(self, sentences=(40, 10)):
        self.dictionary = Dictionary()
        self.train, self.valid = (self.tokenize(self.sentences(n)) for n in sentences)

    @staticmethod
    def sentences(n):
        lengths = torch.randint(3, 9, (n,)).tolist()
        words = torch.randint(len(WORDS), (sum(lengths),)).tolist()
        out, at = [], 0
        for length in lengths:
            out.append(" ".join(WORDS[w] for w in words[at:at + length]))
            at += length
        return out

    def tokenize(self, lines):
        idss = []
        for line in lines:
            words = line.split() + ["<eos>"]
            idss.append(torch.tensor([self.dictionary.add_word(w) for w in words],
                                     dtype=torch.int64))
        return torch.cat(idss)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.0, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def evaluate(model, criterion, data_source):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(EVAL_BATCH)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, BPTT):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(rnn_type, epochs, tied):
    corpus = Corpus()
    train_data = batchify(corpus.train, BATCH)
    val_data = batchify(corpus.valid, EVAL_BATCH)
    model = RNNModel(rnn_type, len(corpus.dictionary), 24, 24, 2, tie_weights=tied)
    criterion = nn.NLLLoss()
    lr, clip = 5.0, 0.25
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses, best_val_loss = [], None
    for _ in range(epochs):
        model.train()
        hidden = model.init_hidden(BATCH)
        for i in range(0, train_data.size(0) - 1, BPTT):
            data, targets = get_batch(train_data, i)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            losses.append(loss.item())
        val_loss = evaluate(model, criterion, val_data)
        losses.append(val_loss)
        assert math.isfinite(math.exp(val_loss))   # the perplexity the example prints
        if best_val_loss is None or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0
            for group in optimizer.param_groups:
                group["lr"] = lr
    return losses


def main():
    torch.manual_seed(0)
    return train("LSTM", epochs=3, tied=True) + train("GRU", epochs=1, tied=False)


if __name__ == "__main__":
    print(main())
