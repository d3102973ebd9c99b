# Hand-written GRU cell unrolled over SEQ_LEN steps (reset/update gates, candidate state) with a
# Python loop over a module-level constant, then a mean over time and a Linear projection.
import torch
import torch.nn as nn

BATCH = 128
SEQ_LEN = 48
INPUT_SIZE = 512
HIDDEN_SIZE = 1024
OUTPUT_SIZE = 256


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.x2h = nn.Linear(input_size, 3 * hidden_size)
        self.h2h = nn.Linear(hidden_size, 3 * hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, x, h):
        total = torch.zeros_like(h)
        for t in range(SEQ_LEN):
            gx = self.x2h(x[:, t])
            gh = self.h2h(h)
            xr, xz, xn = gx.chunk(3, dim=-1)
            hr, hz, hn = gh.chunk(3, dim=-1)
            r = torch.sigmoid(xr + hr)
            z = torch.sigmoid(xz + hz)
            n = torch.tanh(xn + r * hn)
            h = (1.0 - z) * n + z * h
            total = total + h
        return self.out(total / SEQ_LEN)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE), torch.zeros(BATCH, HIDDEN_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, OUTPUT_SIZE]
