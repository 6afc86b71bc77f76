"""A small convolutional network on generated 8x8 images: which of four quadrants is bright.

    python examples/train_cnn.py          # GPU when present, else CPU; about 2 s on a CPU
"""
import gpugrad as torch
from gpugrad import nn, optim

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)


def make_images(n):
    """n noisy 8x8 images, each with one bright 4x4 quadrant; the label is the quadrant."""
    labels = torch.randint(0, 4, (n,))
    images = torch.rand(n, 1, 8, 8) * 0.3
    for q in range(4):
        rows, cols = (q // 2) * 4, (q % 2) * 4
        bright = (labels == q).float().reshape(n, 1, 1, 1)
        images[:, :, rows:rows + 4, cols:cols + 4] += bright * 0.7
    return images.to(device), labels.to(device)


x_train, y_train = make_images(512)
x_test, y_test = make_images(256)

model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 8 x 4 x 4
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 16 x 2 x 2
    nn.Flatten(), nn.Linear(64, 4),
).to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(15):
    model.train()
    for i in range(0, len(y_train), 64):
        optimizer.zero_grad()
        loss = loss_fn(model(x_train[i:i + 64]), y_train[i:i + 64])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}  test accuracy {accuracy:.1%}")
