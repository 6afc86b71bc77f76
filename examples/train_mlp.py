"""Train a small MLP on the built-in spirals data with the PyTorch-style API.

    python examples/train_mlp.py          # the same job as `gpugrad train`, written out
"""
import gpugrad as torch
from gpugrad import datasets, nn, optim
from gpugrad.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)

data = datasets.load("spirals")   # 3 interleaved spiral arms in 2-D, one class each
train = TensorDataset(data.x_train.to(device), data.y_train.to(device))
loader = DataLoader(train, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))

model = nn.Sequential(
    nn.Linear(2, 64), nn.ReLU(),
    nn.Linear(64, 64), nn.ReLU(),
    nn.Linear(64, 3),
).to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-2)
scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=40)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(40):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    scheduler.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    x_test, y_test = data.x_test.to(device), data.y_test.to(device)
    accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
print(f"test accuracy {accuracy:.2%}")
torch.save(model.state_dict(), "mlp.npz")
print(model)
