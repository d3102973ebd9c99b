# MLP variational autoencoder: encoder to mean/log-variance, reparameterisation with supplied noise,
# decoder with sigmoid output, and the ELBO loss (binary cross-entropy + KL divergence).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
input_dim = 4096
hidden_dim = 2048
latent_dim = 256


class Model(nn.Module):
    def __init__(self, input_dim, hidden_dim, latent_dim):
        super().__init__()
        self.enc1 = nn.Linear(input_dim, hidden_dim)
        self.enc2 = nn.Linear(hidden_dim, hidden_dim // 2)
        self.mu = nn.Linear(hidden_dim // 2, latent_dim)
        self.logvar = nn.Linear(hidden_dim // 2, latent_dim)
        self.dec1 = nn.Linear(latent_dim, hidden_dim // 2)
        self.dec2 = nn.Linear(hidden_dim // 2, hidden_dim)
        self.dec3 = nn.Linear(hidden_dim, input_dim)

    def forward(self, x, eps):
        h = F.relu(self.enc2(F.relu(self.enc1(x))))
        mu = self.mu(h)
        logvar = self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        recon = torch.sigmoid(self.dec3(F.relu(self.dec2(F.relu(self.dec1(z))))))
        bce = F.binary_cross_entropy(recon, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return recon, (bce + kld) / x.shape[0]


def get_inputs():
    return [torch.rand(batch_size, input_dim), torch.randn(batch_size, latent_dim)]


def get_init_inputs():
    return [input_dim, hidden_dim, latent_dim]
