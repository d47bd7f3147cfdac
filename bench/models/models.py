#!/usr/bin/python3
"""The models of the benchmark suite, in PyTorch, and everything generated from them.

    /usr/bin/python3 bench/models/models.py [--force] [--write-relay] [MODEL...]

Each model is a PyTorch module with deterministic weights (a fixed seed per
model) and a Relay program in bench/models/NAME.relay whose @main takes the
same weights as parameters, by name. For each model this writes, under
build/bench-models/ (git-ignored; ResNet-18's weights alone are 45 MB):

  NAME.npz           the weights, named as @main's parameters
  NAME.pt            the same weights as the PyTorch module's state_dict, which
                     compare.py loads (the .npz file has some fused, e.g. the
                     LSTM's two biases)
  NAME_CASE.npy      the input of each case (a sequence length, a batch size),
                     one file per input; several inputs are NAME_CASE_INPUT.npy
  NAME.onnx          torch.onnx.export of the same module (opset 17, the
                     sequence or batch dimension dynamic where there is one)
  NAME.stamp         what the files were generated from (this file's hash and
                     PyTorch's version), so that stale files are regenerated

compare.py calls generate() for the models it runs; running this file directly
generates them without benchmarking. The Relay programs of the LSTMs, the GRU,
the Tree-LSTM, the transformer layer and the MLP are written by hand; those of
ResNet-18 and MobileNetV2, long but regular, are written by this file from the
PyTorch modules (--write-relay rewrites them), as TVM's PyTorch front end would
write them, one let-binding per layer.

Batch normalisation is folded into the preceding convolution's weight and bias
here, as a deployment does; every system runs the same folded network.
"""

import argparse
import hashlib
import os
import sys
import warnings

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "build", "bench-models")
ONNX_OPSET = 17  # the newest torch 1.13 exports; the first with LayerNormalization


# ---------------------------------------------------------------------------
# Recurrent networks


class LSTM(nn.Module):
    """torch.nn.LSTM, batch 1; returns the final hidden state (1, hidden)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size)

    def forward(self, sequence):  # (length, 1, input_size)
        _, (hidden, _) = self.lstm(sequence)
        return hidden[0]

    def relay_params(self):
        lstm = self.lstm
        return {
            "weight_ih": lstm.weight_ih_l0,
            "weight_hh": lstm.weight_hh_l0,
            # The Relay cell adds one bias; PyTorch adds two.
            "bias": lstm.bias_ih_l0 + lstm.bias_hh_l0,
        }


class GRU(nn.Module):
    """torch.nn.GRU, batch 1; returns the final hidden state (1, hidden)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size)

    def forward(self, sequence):  # (length, 1, input_size)
        _, hidden = self.gru(sequence)
        return hidden[0]

    def relay_params(self):
        gru = self.gru
        return {
            "weight_ih": gru.weight_ih_l0,
            "weight_hh": gru.weight_hh_l0,
            "bias_ih": gru.bias_ih_l0,
            "bias_hh": gru.bias_hh_l0,
        }


class ChildSumTreeLSTM(nn.Module):
    """A child-sum Tree-LSTM over a tree given as each node's head (parent).

    Written as a PyTorch user writes it (after Tai et al.'s reference code):
    Python recursion over the tree, one node at a time, the children's states
    stacked so that the forget gates of all children take one product.
    Returns the root's hidden state (1, hidden).
    """

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        # Input gate, output gate and cell candidate, in that order.
        self.iou_input = nn.Linear(input_size, 3 * hidden_size)
        self.iou_hidden = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.forget_input = nn.Linear(input_size, hidden_size)
        self.forget_hidden = nn.Linear(hidden_size, hidden_size, bias=False)

    def node(self, word, child_hidden, child_cell):
        hidden_sum = child_hidden.sum(dim=0, keepdim=True)
        iou = self.iou_input(word) + self.iou_hidden(hidden_sum)
        input_gate, output_gate, candidate = torch.split(iou, self.hidden_size, dim=1)
        forget = torch.sigmoid(self.forget_hidden(child_hidden) + self.forget_input(word))
        cell = (torch.sigmoid(input_gate) * torch.tanh(candidate)
                + (forget * child_cell).sum(dim=0, keepdim=True))
        return torch.sigmoid(output_gate) * torch.tanh(cell), cell

    def forward(self, tokens, heads):  # (nodes, input_size), (nodes,) int32
        children = [[] for _ in range(len(heads))]
        root = None
        for word, head in enumerate(heads.tolist()):
            if head < 0:
                root = word
            else:
                children[head].append(word)
        zeros = tokens.new_zeros(1, self.hidden_size)

        def visit(word):
            states = [visit(child) for child in children[word]]
            if states:
                child_hidden = torch.cat([hidden for hidden, _ in states])
                child_cell = torch.cat([cell for _, cell in states])
            else:
                child_hidden, child_cell = zeros, zeros
            return self.node(tokens[word:word + 1], child_hidden, child_cell)

        return visit(root)[0]

    def relay_params(self):
        return {
            "iou_input": self.iou_input.weight,
            "iou_hidden": self.iou_hidden.weight,
            "iou_bias": self.iou_input.bias,
            "forget_input": self.forget_input.weight,
            "forget_hidden": self.forget_hidden.weight,
            "forget_bias": self.forget_input.bias,
        }


def random_binary_tree_heads(leaves, rng):
    """Each node's head (-1 for the root) in a random binary tree with `leaves`
    leaves (2 * leaves - 1 nodes), numbered in order (left subtree, node, right
    subtree), as a binarised constituency parse of a sentence would be."""
    heads = []

    def build(count, parent):
        if count == 1:
            heads.append(parent)
            return
        left = int(rng.integers(1, count))
        slot = len(heads) + 2 * left - 1  # this node's number, after its left subtree
        build(left, slot)
        heads.append(parent)
        build(count - left, slot)

    build(leaves, -1)
    return heads


# ---------------------------------------------------------------------------
# Transformer encoder layer


class TransformerLayer(nn.Module):
    """torch.nn.TransformerEncoderLayer as BERT uses it: post-LN, GELU."""

    def __init__(self, d_model, heads, ffn):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0,
                                                activation="gelu", batch_first=True)

    def forward(self, x):  # (1, length, d_model)
        return self.layer(x)

    def relay_params(self):
        state = self.layer.state_dict()
        return {name.replace("self_attn.", "").replace(".", "_"): value
                for name, value in state.items()}


# ---------------------------------------------------------------------------
# Convolutional networks, with a Relay writer for their (folded) layers


class RelayWriter:
    """Collects @main's parameters and its let-bindings, one per layer."""

    def __init__(self):
        self.params = []  # (name, shape)
        self.lines = []

    def param(self, name, tensor):
        self.params.append((name, tuple(tensor.shape)))
        return "%" + name

    def let(self, name, expression):
        self.lines.append(f"  let %{name} = {expression};")
        return "%" + name

    def conv(self, name, conv, x):
        """A folded convolution (bias included): nn.conv2d + nn.bias_add."""
        weight = self.param(name + "_weight", conv.weight)
        bias = self.param(name + "_bias", conv.bias)
        # Attributes at their defaults (strides 1, padding 0, groups 1) are left
        # out, as Relay's printer leaves them out.
        attributes = []
        if conv.stride != (1, 1):
            attributes.append(f"strides=[{conv.stride[0]}, {conv.stride[1]}]")
        if conv.padding != (0, 0):
            pad = conv.padding[0]
            attributes.append(f"padding=[{pad}, {pad}, {pad}, {pad}]")
        if conv.groups != 1:
            attributes.append(f"groups={conv.groups}")
        attributes += [f"channels={conv.out_channels}",
                       f"kernel_size=[{conv.kernel_size[0]}, {conv.kernel_size[1]}]"]
        conv2d = f"nn.conv2d({x}, {weight}, {', '.join(attributes)})"
        return self.let(name, f"nn.bias_add({conv2d}, {bias})")

    def program(self, header, input_name, input_shape, output_shape, result):
        def tensor_type(shape):
            dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
            return f"Tensor[({dims}), float32]"

        # One line per layer: its weight and its bias.
        params = [f"%{input_name}: {tensor_type(input_shape)}"]
        for (weight, weight_shape), (bias, bias_shape) in zip(self.params[::2], self.params[1::2]):
            params.append(f"%{weight}: {tensor_type(weight_shape)}, "
                          f"%{bias}: {tensor_type(bias_shape)}")
        signature = ",\n          ".join(params)
        comment = "\n".join("// " + line if line else "//" for line in header.splitlines())
        return (f'#[version = "0.0.5"]\n{comment}\n'
                f"def @main({signature})\n          -> {tensor_type(output_shape)} {{\n"
                + "\n".join(self.lines) + f"\n  {result}\n}}\n")


def conv_bn(in_channels, out_channels, kernel, stride, groups=1):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel, stride, kernel // 2, groups=groups,
                  bias=False),
        nn.BatchNorm2d(out_channels))


def fold_batch_norm(module):
    """Folds every Sequential(Conv2d, BatchNorm2d) into one Conv2d with a bias,
    in place: w' = w * gamma / sqrt(var + eps), b' = beta - mean * gamma / sqrt(var + eps)."""
    for name, child in module.named_children():
        if (isinstance(child, nn.Sequential) and len(child) == 2
                and isinstance(child[0], nn.Conv2d) and isinstance(child[1], nn.BatchNorm2d)):
            conv, bn = child
            scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            folded = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size,
                               conv.stride, conv.padding, groups=conv.groups, bias=True)
            folded.weight.data = conv.weight.data * scale.data[:, None, None, None]
            folded.bias.data = (bn.bias - bn.running_mean * scale).data
            setattr(module, name, folded)
        else:
            fold_batch_norm(child)


def calibrate_batch_norm(model, rng):
    """Gives each batch norm a random affine transform (so that folding does
    some work) and sets its running statistics from random images (a
    cumulative average over a few batches), so that the folded network's
    activations keep a trained network's scale instead of growing or vanishing
    layer by layer."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.0)
                module.bias.uniform_(-0.1, 0.1)
                module.momentum = None  # cumulative average
        model.train()
        for _ in range(4):
            model(torch.from_numpy(rng.normal(0, 1, (4, 3, 224, 224)).astype(np.float32)))
    model.eval()


class BasicBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.conv1 = conv_bn(in_channels, out_channels, 3, stride)
        self.conv2 = conv_bn(out_channels, out_channels, 3, 1)
        self.downsample = (conv_bn(in_channels, out_channels, 1, stride)
                           if stride != 1 or in_channels != out_channels else None)

    def forward(self, x):
        out = self.conv2(torch.relu(self.conv1(x)))
        shortcut = x if self.downsample is None else self.downsample(x)
        return torch.relu(out + shortcut)

    def relay(self, writer, name, x):
        out = writer.let(name + "_relu1", f"nn.relu({writer.conv(name + '_conv1', self.conv1, x)})")
        out = writer.conv(name + "_conv2", self.conv2, out)
        shortcut = x if self.downsample is None else writer.conv(
            name + "_downsample", self.downsample, x)
        return writer.let(name, f"nn.relu(add({out}, {shortcut}))")


class ResNet18(nn.Module):
    """ResNet-18 (He et al., 2016) for 224x224 images and 1000 classes."""

    def __init__(self):
        super().__init__()
        self.conv1 = conv_bn(3, 64, 7, 2)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        stages = []
        in_channels = 64
        for out_channels, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            stages.append(nn.Sequential(BasicBlock(in_channels, out_channels, stride),
                                        BasicBlock(out_channels, out_channels, 1)))
            in_channels = out_channels
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(512, 1000)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):  # He initialisation, as torchvision's
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, image):
        x = self.maxpool(torch.relu(self.conv1(image)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    def relay_text(self):
        writer = RelayWriter()
        x = writer.let("stem", f"nn.relu({writer.conv('conv1', self.conv1, '%image')})")
        x = writer.let("pool", f"nn.max_pool2d({x}, pool_size=[3, 3], strides=[2, 2], "
                               "padding=[1, 1, 1, 1])")
        for stage in range(1, 5):
            for index, block in enumerate(getattr(self, f"layer{stage}")):
                x = block.relay(writer, f"layer{stage}_{index}", x)
        x = writer.let("features", f"nn.batch_flatten(nn.global_avg_pool2d({x}))")
        weight = writer.param("fc_weight", self.fc.weight)
        bias = writer.param("fc_bias", self.fc.bias)
        header = RESNET_HEADER
        return writer.program(header, "image", (1, 3, 224, 224), (1, 1000),
                              f"nn.bias_add(nn.dense({x}, {weight}), {bias})")


RESNET_HEADER = """\
ResNet-18 (He et al., 2016) on one 224x224 RGB image (NCHW), 1000 logits:
a 7x7 stride-2 convolution and a 3x3 max-pool, four stages of two basic
blocks (3x3 convolution, ReLU, 3x3 convolution, plus the input or its 1x1
projection, ReLU) at 64, 128, 256 and 512 channels, global average pooling
and a dense layer. Batch normalisation is folded into each convolution's
weight and bias, as a deployment does.

Written by bench/models/models.py from its PyTorch ResNet18 (regenerate with
`/usr/bin/python3 bench/models/models.py --write-relay`); the weights are
@main's parameters, supplied by name from the .npz file it writes:
  relay-vm run bench/models/resnet18.relay --params build/bench-models/resnet18.npz \\
      --input image=build/bench-models/resnet18_batch1.npy"""


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expansion, 3x3 depthwise, 1x1 linear projection."""

    def __init__(self, in_channels, out_channels, stride, expansion):
        super().__init__()
        hidden = in_channels * expansion
        self.expand = conv_bn(in_channels, hidden, 1, 1) if expansion != 1 else None
        self.depthwise = conv_bn(hidden, hidden, 3, stride, groups=hidden)
        self.project = conv_bn(hidden, out_channels, 1, 1)
        self.residual = stride == 1 and in_channels == out_channels

    def forward(self, x):
        out = x if self.expand is None else nn.functional.relu6(self.expand(x))
        out = self.project(nn.functional.relu6(self.depthwise(out)))
        return x + out if self.residual else out

    def relay(self, writer, name, x):
        out = x
        if self.expand is not None:
            out = writer.let(name + "_expand_relu6", "clip({}, a_min=0f, a_max=6f)".format(
                writer.conv(name + "_expand", self.expand, out)))
        out = writer.let(name + "_depthwise_relu6", "clip({}, a_min=0f, a_max=6f)".format(
            writer.conv(name + "_depthwise", self.depthwise, out)))
        out = writer.conv(name + "_project", self.project, out)
        return writer.let(name, f"add({x}, {out})") if self.residual else out


class MobileNetV2(nn.Module):
    """MobileNetV2 (Sandler et al., 2018), width 1.0, 224x224, 1000 classes."""

    # expansion, output channels, blocks, stride of the first block
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 32, 3, 2)
        blocks = []
        in_channels = 32
        for expansion, out_channels, count, stride in self.SETTINGS:
            for index in range(count):
                blocks.append(InvertedResidual(in_channels, out_channels,
                                               stride if index == 0 else 1, expansion))
                in_channels = out_channels
        self.blocks = nn.Sequential(*blocks)
        self.head = conv_bn(320, 1280, 1, 1)
        self.classifier = nn.Linear(1280, 1000)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out")

    def forward(self, image):
        x = nn.functional.relu6(self.stem(image))
        x = nn.functional.relu6(self.head(self.blocks(x)))
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    def relay_text(self):
        writer = RelayWriter()
        x = writer.let("stem_relu6", "clip({}, a_min=0f, a_max=6f)".format(
            writer.conv("stem", self.stem, "%image")))
        for index, block in enumerate(self.blocks):
            x = block.relay(writer, f"blocks_{index}", x)
        x = writer.let("head_relu6", "clip({}, a_min=0f, a_max=6f)".format(
            writer.conv("head", self.head, x)))
        x = writer.let("features", f"nn.batch_flatten(nn.global_avg_pool2d({x}))")
        weight = writer.param("classifier_weight", self.classifier.weight)
        bias = writer.param("classifier_bias", self.classifier.bias)
        return writer.program(MOBILENET_HEADER, "image", (1, 3, 224, 224), (1, 1000),
                              f"nn.bias_add(nn.dense({x}, {weight}), {bias})")


MOBILENET_HEADER = """\
MobileNetV2 (Sandler et al., 2018), width 1.0, on one 224x224 RGB image
(NCHW), 1000 logits: a 3x3 stride-2 convolution, 17 inverted residual blocks
(1x1 expansion, 3x3 depthwise convolution, i.e. nn.conv2d with groups equal
to its channels, 1x1 linear projection, plus the input where the shapes
agree), a 1x1 convolution to 1280 channels, global average pooling and a
dense layer; ReLU6 is clip(x, 0, 6). Batch normalisation is folded into each
convolution's weight and bias, as a deployment does.

Written by bench/models/models.py from its PyTorch MobileNetV2 (regenerate
with `/usr/bin/python3 bench/models/models.py --write-relay`); the weights
are @main's parameters, supplied by name from the .npz file it writes:
  relay-vm run bench/models/mobilenet_v2.relay --params build/bench-models/mobilenet_v2.npz \\
      --input image=build/bench-models/mobilenet_v2_batch1.npy"""


def conv_net_params(model):
    return {name.replace(".", "_"): value for name, value in model.state_dict().items()}


# ---------------------------------------------------------------------------
# Multi-layer perceptrons


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x):
        for index, layer in enumerate(self.layers):
            x = layer(x)
            if index + 1 < len(self.layers):
                x = torch.relu(x)
        return x

    def relay_params(self):
        params = {}
        for index, layer in enumerate(self.layers):
            params[f"fc{index + 1}_weight"] = layer.weight
            params[f"fc{index + 1}_bias"] = layer.bias
        return params


class ExampleMLP(nn.Module):
    """examples/mlp.relay (64 -> 32 -> 10, softmax) with examples/mlp_params.npz."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.output = nn.Linear(32, 10)
        weights = np.load(os.path.join(ROOT, "examples", "mlp_params.npz"))
        with torch.no_grad():
            for layer, name in [(self.hidden, "hidden"), (self.output, "output")]:
                layer.weight.copy_(torch.from_numpy(weights[name + "_weight"]))
                layer.bias.copy_(torch.from_numpy(weights[name + "_bias"]))

    def forward(self, x):
        return torch.softmax(self.output(torch.relu(self.hidden(x))), dim=-1)

    def relay_params(self):
        return {"hidden_weight": self.hidden.weight, "hidden_bias": self.hidden.bias,
                "output_weight": self.output.weight, "output_bias": self.output.bias}


# ---------------------------------------------------------------------------
# The suite


class Case:
    """One size of a model: its label for the table and its inputs by name
    (the names of @main's parameters and of the ONNX graph's inputs)."""

    def __init__(self, label, key, inputs):
        self.label = label
        self.key = key  # file name part: NAME_KEY.npy
        self.inputs = inputs  # name -> np.ndarray


class Model:
    """A model of the suite. build() returns the PyTorch module in eval mode
    with freshly initialised weights (generate() returns it with the weights
    of the generated files); cases() the inputs of every size it is measured
    at."""

    def __init__(self, name, title, relay, build, cases, onnx_axes, seed):
        self.name = name
        self.title = title
        self.relay = os.path.join(HERE, relay)
        self.build_module = build  # (rng, initialise) -> nn.Module
        self.make_cases = cases
        # The ONNX export's dynamic axes ({input or output name: {axis: name}});
        # None: the model has no ONNX peer.
        self.onnx_axes = onnx_axes
        self.seed = seed

    def build(self, initialise=True):
        torch.manual_seed(self.seed)
        module = self.build_module(np.random.default_rng(self.seed), initialise)
        return module.eval()

    def cases(self):
        return self.make_cases(np.random.default_rng(self.seed + 1))

    @property
    def params_path(self):
        return os.path.join(OUT, self.name + ".npz")

    @property
    def state_path(self):
        """The PyTorch module's state_dict, for the peers' runs."""
        return os.path.join(OUT, self.name + ".pt")

    @property
    def stamp_path(self):
        return os.path.join(OUT, self.name + ".stamp")

    @property
    def onnx_path(self):
        return os.path.join(OUT, self.name + ".onnx") if self.onnx_axes is not None else None

    def input_path(self, case, input_name):
        if len(case.inputs) == 1:
            return os.path.join(OUT, f"{self.name}_{case.key}.npy")
        return os.path.join(OUT, f"{self.name}_{case.key}_{input_name}.npy")


def normal(rng, shape):
    return rng.normal(0.0, 1.0, shape).astype(np.float32)


def sequence_cases(input_size, lengths):
    return lambda rng: [Case(f"length {length}", f"len{length}",
                             {"sequence": normal(rng, (length, 1, input_size))})
                        for length in lengths]


def transformer_cases(rng):
    return [Case(f"length {length}", f"len{length}", {"x": normal(rng, (1, length, 256))})
            for length in (16, 32, 64, 128, 256)]


def tree_cases(rng):
    heads = random_binary_tree_heads(32, rng)
    return [Case("32 leaves", "leaves32", {
        "tokens": normal(rng, (len(heads), 300)),
        "heads": np.array(heads, np.int32)})]


def image_cases(rng):
    return [Case("1x3x224x224", "batch1", {"image": normal(rng, (1, 3, 224, 224))})]


def batch_cases(features, batches):
    return lambda rng: [Case(f"batch {batch}", f"batch{batch}",
                             {"input": normal(rng, (batch, features))})
                        for batch in batches]


def convnet(cls):
    def build(rng, initialise=True):
        model = cls()
        if initialise:  # otherwise the weights are about to be loaded
            calibrate_batch_norm(model, rng)
        fold_batch_norm(model)
        return model
    return build


SEQUENCE_AXES = {"sequence": {0: "length"}}
BATCH_AXES = {"input": {0: "batch"}, "output": {0: "batch"}}
MODELS = [
    Model("lstm_512", "LSTM 512/512", "lstm_512.relay", lambda rng, _: LSTM(512, 512),
          sequence_cases(512, (16, 64, 128)), SEQUENCE_AXES, 101),
    Model("lstm_128", "LSTM 128/128", "lstm_128.relay", lambda rng, _: LSTM(128, 128),
          sequence_cases(128, (16, 128)), SEQUENCE_AXES, 102),
    Model("gru", "GRU 256/256", "gru.relay", lambda rng, _: GRU(256, 256),
          sequence_cases(256, (16, 128)), SEQUENCE_AXES, 103),
    Model("tree_lstm", "Tree-LSTM 300/150", "tree_lstm.relay",
          lambda rng, _: ChildSumTreeLSTM(300, 150), tree_cases, None, 104),
    Model("transformer", "Transformer layer (d 256, 4 heads, ffn 1024)", "transformer.relay",
          lambda rng, _: TransformerLayer(256, 4, 1024), transformer_cases,
          {"x": {1: "length"}, "output": {1: "length"}}, 105),
    Model("resnet18", "ResNet-18", "resnet18.relay", convnet(ResNet18), image_cases, {}, 106),
    Model("mobilenet_v2", "MobileNetV2", "mobilenet_v2.relay", convnet(MobileNetV2),
          image_cases, {}, 107),
    Model("mlp", "MLP 784-512-512-10", "mlp.relay", lambda rng, _: MLP([784, 512, 512, 10]),
          batch_cases(784, (1, 64)), BATCH_AXES, 108),
    Model("mlp_example", "MLP 64-32-10 (examples/mlp.relay)",
          os.path.join("..", "..", "examples", "mlp.relay"), lambda rng, _: ExampleMLP(),
          batch_cases(64, (1,)), BATCH_AXES, 109),
]
BY_NAME = {model.name: model for model in MODELS}


def relay_params(model, module):
    if hasattr(module, "relay_params"):
        params = module.relay_params()
    else:
        params = conv_net_params(module)
    return {name: value.detach().numpy().astype(np.float32) for name, value in params.items()}


def generated_relay_text(model, module):
    """The Relay text this file writes for `model`, or None if it is hand-written."""
    return module.relay_text() if hasattr(module, "relay_text") else None


def stamp_text():
    with open(os.path.abspath(__file__), "rb") as source:
        digest = hashlib.sha256(source.read()).hexdigest()
    return f"models.py {digest}\ntorch {torch.__version__}\n"


def generated_files(model):
    files = [model.params_path, model.state_path]
    files += [model.input_path(case, name) for case in model.cases() for name in case.inputs]
    if model.onnx_path is not None:
        files.append(model.onnx_path)
    return files


def is_current(model):
    if not os.path.exists(model.stamp_path):
        return False
    with open(model.stamp_path) as stamp:
        if stamp.read() != stamp_text():
            return False
    return all(os.path.exists(path) for path in generated_files(model))


def generate(model, force=False, log=sys.stderr):
    """Writes the model's weights, inputs and ONNX file unless they are current.
    Returns the PyTorch module (eval mode) with the weights of those files."""
    if not force and is_current(model):
        module = model.build(initialise=False)
        module.load_state_dict(torch.load(model.state_path))
        return module.eval()
    print(f"models.py: generating {model.name} in {os.path.relpath(OUT, ROOT)}/", file=log)
    module = model.build()
    os.makedirs(OUT, exist_ok=True)
    if os.path.exists(model.stamp_path):
        os.remove(model.stamp_path)
    np.savez(model.params_path, **relay_params(model, module))
    torch.save(module.state_dict(), model.state_path)
    cases = model.cases()
    for case in cases:
        for name, value in case.inputs.items():
            np.save(model.input_path(case, name), value)
    if model.onnx_path is not None:
        example = cases[0].inputs
        names = list(example)
        # Not under torch.no_grad(): without autograd, nn.TransformerEncoderLayer
        # takes its fused fast path, an operator that ONNX export lacks. The
        # export's warnings (about the LSTM's batch size, its own passes) are
        # about details of the export that do not matter here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, tuple(torch.from_numpy(example[name]) for name in names),
                              model.onnx_path, input_names=names, output_names=["output"],
                              dynamic_axes=model.onnx_axes, opset_version=ONNX_OPSET)
    with open(model.stamp_path, "w") as stamp:
        stamp.write(stamp_text())
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="models to generate (default: all): "
                        + ", ".join(BY_NAME))
    parser.add_argument("--force", action="store_true", help="regenerate even if current")
    parser.add_argument("--write-relay", action="store_true",
                        help="rewrite the generated .relay files in bench/models/")
    args = parser.parse_args()
    for name in args.models or list(BY_NAME):
        if name not in BY_NAME:
            parser.error(f"unknown model {name!r}; the models are {', '.join(BY_NAME)}")
        model = BY_NAME[name]
        module = generate(model, force=args.force)
        text = generated_relay_text(model, module)
        if args.write_relay and text is not None:
            with open(model.relay, "w") as relay:
                relay.write(text)
            print(f"models.py: wrote {os.path.relpath(model.relay, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
