"""A first look: a small regression fitted by hand-written gradient descent."""
import dispatchtorch as torch

torch.manual_seed(0)
x = torch.randn(256, 3)
true_w = torch.tensor([[1.5], [-2.0], [0.5]])
y = x @ true_w + 0.1 * torch.randn(256, 1)

w = torch.zeros(3, 1, requires_grad=True)
for step in range(200):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad = None
print(f"loss {loss.item():.4f}, w = {w.detach().reshape(-1).tolist()}")
