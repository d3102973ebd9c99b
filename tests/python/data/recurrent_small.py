# nn.GRU (2 layers, bidirectional, batch-first) -> nn.LSTM (2 layers) -> nn.RNN (relu, no bias).
import torch
import torch.nn as nn

batch_size = 4
seq_len = 6
input_size = 8
hidden_size = 16


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(
            input_size, hidden_size, num_layers=2, batch_first=True, bidirectional=True
        )
        self.lstm = nn.LSTM(2 * hidden_size, hidden_size, num_layers=2)
        self.rnn = nn.RNN(hidden_size, hidden_size, nonlinearity="relu", bias=False)

    def forward(self, x, h0):
        out, hn = self.gru(x, h0)
        y, (h, c) = self.lstm(out.transpose(0, 1))
        z, hz = self.rnn(y)
        return out, hn, y, h, c, z, hz


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size), torch.randn(4, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size]
