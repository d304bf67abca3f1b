#!/usr/bin/env python3
"""Measure prefill and decode step times of a Llama-2-shaped model on one GPU, with random fp16
weights (no checkpoint needed), in the column format of Splitwise's perf_model.csv, so that
`hetsched plan service --check --calibration FILE` can compare the serving model with them.

A plain PyTorch implementation (no fused kernels beyond PyTorch's scaled_dot_product_attention,
no CUDA graphs): its fixed costs are those of eager PyTorch, not of a tuned serving engine.

Usage: measure-llm-steps.py --model llama2-7b --hardware NAME [--layers N] > out.csv
"""
import argparse
import sys
import time

SHAPES = {  # Llama 2 (Touvron et al. 2023): layers, hidden, heads, kv heads, intermediate
    "llama2-7b": (32, 4096, 32, 32, 11008),
    "llama2-13b": (40, 5120, 40, 40, 13824),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="llama2-7b", choices=sorted(SHAPES))
    ap.add_argument("--hardware", required=True, help="name written in the hardware column")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F

    layers, hidden, heads, kv_heads, inter = SHAPES[args.model]
    head = hidden // heads
    dev = "cuda"
    dt = torch.float16
    torch.manual_seed(0)
    w = []
    for _ in range(layers):
        w.append(dict(
            qkv=torch.randn(hidden, hidden + 2 * kv_heads * head, device=dev, dtype=dt) * 0.02,
            o=torch.randn(hidden, hidden, device=dev, dtype=dt) * 0.02,
            gate_up=torch.randn(hidden, 2 * inter, device=dev, dtype=dt) * 0.02,
            down=torch.randn(inter, hidden, device=dev, dtype=dt) * 0.02))
    lm_head = torch.randn(hidden, 32000, device=dev, dtype=dt) * 0.02

    def forward(x, kv, start):
        # x: [batch, tokens, hidden]; kv: per layer (k, v) of [batch, heads, max_len, head]
        b, t, _ = x.shape
        for i, lw in enumerate(w):
            h = F.rms_norm(x, (hidden,)) if hasattr(F, "rms_norm") else x
            qkv = h @ lw["qkv"]
            q, k, v = qkv.split([hidden, kv_heads * head, kv_heads * head], dim=-1)
            q = q.view(b, t, heads, head).transpose(1, 2)
            k = k.view(b, t, kv_heads, head).transpose(1, 2)
            v = v.view(b, t, kv_heads, head).transpose(1, 2)
            kc, vc = kv[i]
            kc[:, :, start:start + t] = k
            vc[:, :, start:start + t] = v
            a = F.scaled_dot_product_attention(q, kc[:, :, :start + t], vc[:, :, :start + t],
                                               is_causal=(t > 1))
            x = x + a.transpose(1, 2).reshape(b, t, hidden) @ lw["o"]
            h = F.rms_norm(x, (hidden,)) if hasattr(F, "rms_norm") else x
            g, u = (h @ lw["gate_up"]).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ lw["down"]
        return x[:, -1] @ lm_head

    def timed(fn):
        fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            samples.append(time.perf_counter() - t0)
        samples.sort()
        return samples[len(samples) // 2]

    print("model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,"
          "prompt_time,token_time,e2e_time,tensor_parallel")
    cases = [(p, 1) for p in (128, 512, 2048, 4096)] + [(512, b) for b in (4, 16, 32)]
    tokens = 16
    for prompt, batch in cases:
        max_len = prompt + tokens + 1
        kv = [(torch.zeros(batch, kv_heads, max_len, head, device=dev, dtype=dt),
               torch.zeros(batch, kv_heads, max_len, head, device=dev, dtype=dt))
              for _ in range(layers)]
        x = torch.randn(batch, prompt, hidden, device=dev, dtype=dt)
        with torch.inference_mode():
            prompt_s = timed(lambda: forward(x, kv, 0))
            step = torch.randn(batch, 1, hidden, device=dev, dtype=dt)
            token_s = timed(lambda: forward(step, kv, prompt + tokens // 2))
        print(f"{args.model},{args.hardware},{prompt},{batch},{tokens},0,0,"
              f"{prompt_s * 1e3:.4f},{token_s * 1e3:.4f},{(prompt_s + tokens * token_s) * 1e3:.4f},1")
        sys.stdout.flush()
        del kv


if __name__ == "__main__":
    main()
