"""The variational autoencoder of PyTorch's examples, on random images in [0, 1] in place of
MNIST: an MLP encoder to a mean and a log-variance, the reparameterisation trick with
torch.randn_like, a sigmoid decoder, binary cross-entropy summed over the batch plus the KL term,
Adam, and a sampling pass from the prior."""
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc21 = nn.Linear(64, 8)
        self.fc22 = nn.Linear(64, 8)
        self.fc3 = nn.Linear(8, 64)
        self.fc4 = nn.Linear(64, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def main(epochs=2):
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    images = torch.rand(64, 1, 28, 28)
    train_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, torch.zeros(64)), batch_size=16, shuffle=True)
    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(epochs):
        model.train()
        train_loss = 0
        for data, _ in train_loader:
            data = data.to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            losses.append(loss.item() / len(data))
        losses.append(train_loss / len(train_loader.dataset))
        model.eval()
        with torch.no_grad():
            sample = model.decode(torch.randn(8, 8).to(device)).cpu()
            losses.append(sample.view(8, 1, 28, 28).mean().item())
    return losses


if __name__ == "__main__":
    print(main())
