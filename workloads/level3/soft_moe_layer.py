# Dense (soft) mixture of experts: softmax gate over all experts, every expert (GELU MLP) runs on
# every token, outputs combined by the gate weights via stack + weighted sum; residual + LayerNorm.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 256
hidden_size = 1024
expert_hidden = 2048
num_experts = 8


class Expert(nn.Module):
    def __init__(self, hidden_size, expert_hidden):
        super().__init__()
        self.fc1 = nn.Linear(hidden_size, expert_hidden)
        self.fc2 = nn.Linear(expert_hidden, hidden_size)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Model(nn.Module):
    def __init__(self, hidden_size, expert_hidden, num_experts):
        super().__init__()
        self.gate = nn.Linear(hidden_size, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(hidden_size, expert_hidden) for _ in range(num_experts)])
        self.norm = nn.LayerNorm(hidden_size)

    def forward(self, x):
        weights = F.softmax(self.gate(x), dim=-1)  # [b, s, e]
        expert_out = torch.stack([expert(x) for expert in self.experts], dim=-1)  # [b, s, h, e]
        mixed = torch.sum(expert_out * weights.unsqueeze(2), dim=-1)
        return self.norm(x + mixed)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size, expert_hidden, num_experts]
