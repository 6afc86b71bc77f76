"""The training loop of seed 004 ("why zero the gradients"), as written there but for the import:
nn.Linear(1, 1) fitted to one point (x = 1, y = 2) by SGD on an MSE loss.

    python examples/seed004_linear.py
"""
import gpugrad as torch
import gpugrad.nn as nn
import gpugrad.optim as optim

torch.manual_seed(0)

# model
model = nn.Linear(1, 1)
optimizer = optim.SGD(model.parameters(), lr=0.01)
input_tensor = torch.tensor([[1.0]], requires_grad=True)
target = torch.tensor([[2.0]])

# training loop
for _epoch in range(100):
    # zero the gradients: backward() adds into .grad, it does not overwrite it
    optimizer.zero_grad()

    # forward
    output = model(input_tensor)

    # loss
    loss_function = nn.MSELoss()
    loss = loss_function(output, target)

    # backward
    loss.backward()

    # update the parameters
    optimizer.step()

print(f"output {model(input_tensor).item():.4f} (target 2.0), loss {loss.item():.6f}")
print(f"weight {model.weight.item():.4f}, bias {model.bias.item():.4f}")
print("grad_fn of the output:", output.grad_fn)
print("its inputs:", output.grad_fn.next_functions)
