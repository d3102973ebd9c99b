# Two-layer batch-first nn.LSTM over a sequence; the last time step feeds a Linear classifier.
import torch
import torch.nn as nn

batch_size = 64
seq_len = 512
input_size = 512
hidden_size = 1024
num_layers = 2
num_classes = 100


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, num_classes):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True, dropout=0.0)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x, h0, c0):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


def get_inputs():
    return [
        torch.randn(batch_size, seq_len, input_size),
        torch.randn(num_layers, batch_size, hidden_size),
        torch.randn(num_layers, batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, num_classes]
