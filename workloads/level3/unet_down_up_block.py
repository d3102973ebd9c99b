# Two-level U-Net: double-conv encoder stages with max-pool, bottleneck, ConvTranspose2d upsampling,
# skip connections concatenated on channels, double-conv decoder stages, 1x1 output conv.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 2
image_size = 224
base_channels = 64


class DoubleConv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.block(x)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, base_channels):
        super().__init__()
        c = base_channels
        self.enc1 = DoubleConv(in_channels, c)
        self.enc2 = DoubleConv(c, 2 * c)
        self.bottleneck = DoubleConv(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = DoubleConv(4 * c, 2 * c)
        self.up1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec1 = DoubleConv(2 * c, c)
        self.out = nn.Conv2d(c, out_channels, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.out(d1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels, base_channels]
