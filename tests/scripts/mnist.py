"""The MNIST classifier of PyTorch's examples, on random 28x28 images in place of the download:
a DataLoader over a TensorDataset that shuffles, two convolutions, max pooling, flatten,
log_softmax and nll_loss, Adadelta with a StepLR schedule, and an evaluation pass summing the
loss and counting correct predictions. (Its dropout layers are left out: parity needs the same
masks, which the two libraries draw differently.)"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(2304, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def train(model, device, train_loader, optimizer, losses):
    model.train()
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())


def test(model, device, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return test_loss / len(test_loader.dataset), correct


def main(epochs=2):
    torch.manual_seed(1)
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    images = (torch.rand(96, 1, 28, 28) - 0.1307) / 0.3081    # transforms.Normalize
    labels = torch.randint(0, 10, (96,))
    train_loader = DataLoader(TensorDataset(images[:64], labels[:64]), batch_size=16,
                              shuffle=True)
    test_loader = DataLoader(TensorDataset(images[64:], labels[64:]), batch_size=16)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for _ in range(epochs):
        train(model, device, train_loader, optimizer, losses)
        test_loss, correct = test(model, device, test_loader)
        losses += [test_loss, correct]
        scheduler.step()
    return losses


if __name__ == "__main__":
    print(main())
