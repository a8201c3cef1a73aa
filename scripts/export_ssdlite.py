"""Export torchvision's SSDlite320 (MobileNetV3-Large backbone, random weights) to ONNX for the
worked example of docs/compare.md.

Needs torch and torchvision, which ortops does not depend on: run it in a venv of its own, e.g.

    python3 -m venv venv-torch && venv-torch/bin/pip install torch==2.14.1 torchvision==0.29.1 onnx
    venv-torch/bin/python scripts/export_ssdlite.py ssdlite.onnx

The model (random weights, ``weights=None, weights_backbone=None``, seeded) is not committed. The
export is the TorchScript-based one (``dynamo=False``) at opset 17: its post-processing holds 90
TopK nodes (one per class) and torchvision's NMS as an ONNX NonMaxSuppression inside an ``If``.
"""

from __future__ import annotations

import argparse

import torch
import torchvision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default: 0)")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    image = torch.rand(1, 3, 320, 320)
    torch.onnx.export(model, (image,), args.out, opset_version=17, dynamo=False, input_names=["image"],
                      output_names=["boxes", "scores", "labels"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
