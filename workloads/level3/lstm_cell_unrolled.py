# Hand-written LSTM cell unrolled over SEQ_LEN time steps with a Python loop (gates via one GEMM
# on the input and one on the hidden state), followed by a Linear head on the final hidden state.
import torch
import torch.nn as nn

BATCH = 64
SEQ_LEN = 64
INPUT_SIZE = 1024
HIDDEN_SIZE = 1024
OUTPUT_SIZE = 512


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.w_ih = nn.Linear(input_size, 4 * hidden_size)
        self.w_hh = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        self.head = nn.Linear(hidden_size, output_size)

    def forward(self, x, h, c):
        # precompute the input projections for all time steps at once
        xg = self.w_ih(x)
        outputs = []
        for t in range(SEQ_LEN):
            gates = xg[:, t, :] + self.w_hh(h)
            i, f, g, o = gates.chunk(4, dim=1)
            i = torch.sigmoid(i)
            f = torch.sigmoid(f)
            g = torch.tanh(g)
            o = torch.sigmoid(o)
            c = f * c + i * g
            h = o * torch.tanh(c)
            outputs.append(h)
        seq = torch.stack(outputs, dim=1)
        return self.head(h), seq


def get_inputs():
    return [
        torch.randn(BATCH, SEQ_LEN, INPUT_SIZE),
        torch.randn(BATCH, HIDDEN_SIZE),
        torch.randn(BATCH, HIDDEN_SIZE),
    ]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, OUTPUT_SIZE]
