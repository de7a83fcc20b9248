#!/usr/bin/env python3
"""PyTorch + PEFT reference for the learner's LoRA SFT (issue 7, "Reference match").

Inputs come from our C side (tests/learner/ref-dump.c):

    learner-ref-dump stories260K.gguf OUTDIR
    python3 tests/reference/peft_reference.py OUTDIR [--device cpu|cuda|both]

OUTDIR holds model.gguf (F32 llama), adapter_init/ (our PEFT adapter: the same LoRA
initialisation for both sides), run.json (AdamW settings, the 20 batches, the learning
rate of each step, our per-step losses) and adapter_final/ with our probe logits.

This script
  1. reads the GGUF with a small parser of its own and builds a transformers
     LlamaForCausalLM with the same weights; q/k rows are un-permuted from llama.cpp's
     adjacent-pair RoPE layout back to Hugging Face's rotate_half layout (the inverse of
     convert_hf_to_gguf.py's LlamaModel.permute);
  2. loads adapter_init with peft.PeftModel.from_pretrained (is_trainable=True), i.e.
     PEFT reads the file we wrote;
  3. runs the same 20 steps: per step, the batch-mean token cross-entropy (ignore_index
     -100) over the batch's sequences, backward, clip_grad_norm_(1.0), torch.optim.AdamW
     with the step's learning rate; compares each step's loss with ours (relative
     tolerance 1e-3 on the CPU path, 1e-2 on the GPU path);
  4. loads adapter_final into a fresh model and compares its logits on the probe with
     ours (the same adapter applied by our training forward).
Exit status 0 when every check passes.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

# ---------------------------------------------------------------- GGUF reader

GGUF_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf(path):
    """Metadata dict and {name: float32 ndarray (row-major, shape reversed from ne)}.
    Only F32 tensors are supported (the reference model is F32)."""
    data = open(path, "rb").read()
    off = 0

    def rd(fmt):
        nonlocal off
        v = struct.unpack_from("<" + fmt, data, off)
        off += struct.calcsize("<" + fmt)
        return v[0]

    def rd_str():
        nonlocal off
        n = rd("Q")
        s = data[off:off + n].decode("utf-8", "replace")
        off += n
        return s

    def rd_val(t):
        if t in GGUF_SCALAR:
            return rd(GGUF_SCALAR[t])
        if t == 8:
            return rd_str()
        if t == 9:
            et = rd("I")
            n = rd("Q")
            return [rd_val(et) for _ in range(n)]
        raise ValueError("unknown GGUF value type %d" % t)

    assert data[:4] == b"GGUF", "not a GGUF file"
    off = 4
    version = rd("I")
    assert version in (2, 3)
    n_tensors = rd("Q")
    n_kv = rd("Q")
    meta = {}
    for _ in range(n_kv):
        k = rd_str()
        meta[k] = rd_val(rd("I"))
    infos = []
    for _ in range(n_tensors):
        name = rd_str()
        nd = rd("I")
        ne = [rd("Q") for _ in range(nd)]
        typ = rd("I")
        toff = rd("Q")
        infos.append((name, ne, typ, toff))
    align = meta.get("general.alignment", 32)
    base = (off + align - 1) // align * align
    tensors = {}
    for name, ne, typ, toff in infos:
        assert typ == 0, "tensor %s is not F32" % name
        n = int(np.prod(ne))
        arr = np.frombuffer(data, dtype="<f4", count=n, offset=base + toff).copy()
        tensors[name] = arr.reshape(list(reversed(ne)))
    return meta, tensors


def unpermute(w, n_head):
    """Inverse of llama.cpp's LlamaModel.permute: GGUF row h*hd + 2i + j -> HF row
    h*hd + j*hd/2 + i."""
    rows = w.shape[0]
    hd = rows // n_head
    return w.reshape(n_head, hd // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def build_model(gguf_path, dtype, device):
    from transformers import LlamaConfig, LlamaForCausalLM

    meta, t = read_gguf(gguf_path)
    a = meta["general.architecture"]
    assert a == "llama"
    n_embd = meta[a + ".embedding_length"]
    n_head = meta[a + ".attention.head_count"]
    n_kv = meta.get(a + ".attention.head_count_kv", n_head)
    n_layer = meta[a + ".block_count"]
    vocab = t["token_embd.weight"].shape[0]
    cfg = LlamaConfig(
        vocab_size=vocab, hidden_size=n_embd,
        intermediate_size=meta[a + ".feed_forward_length"], num_hidden_layers=n_layer,
        num_attention_heads=n_head, num_key_value_heads=n_kv,
        rms_norm_eps=meta.get(a + ".attention.layer_norm_rms_epsilon", 1e-5),
        rope_theta=meta.get(a + ".rope.freq_base", 10000.0), max_position_embeddings=512,
        tie_word_embeddings="output.weight" not in t, attention_bias=False, mlp_bias=False,
    )
    cfg._attn_implementation = "eager"
    model = LlamaForCausalLM(cfg)
    sd = {"model.embed_tokens.weight": t["token_embd.weight"],
          "model.norm.weight": t["output_norm.weight"]}
    if "output.weight" in t:
        sd["lm_head.weight"] = t["output.weight"]
    for i in range(n_layer):
        p, q = "blk.%d." % i, "model.layers.%d." % i
        sd[q + "input_layernorm.weight"] = t[p + "attn_norm.weight"]
        sd[q + "self_attn.q_proj.weight"] = unpermute(t[p + "attn_q.weight"], n_head)
        sd[q + "self_attn.k_proj.weight"] = unpermute(t[p + "attn_k.weight"], n_kv)
        sd[q + "self_attn.v_proj.weight"] = t[p + "attn_v.weight"]
        sd[q + "self_attn.o_proj.weight"] = t[p + "attn_output.weight"]
        sd[q + "post_attention_layernorm.weight"] = t[p + "ffn_norm.weight"]
        sd[q + "mlp.gate_proj.weight"] = t[p + "ffn_gate.weight"]
        sd[q + "mlp.up_proj.weight"] = t[p + "ffn_up.weight"]
        sd[q + "mlp.down_proj.weight"] = t[p + "ffn_down.weight"]
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()},
                                                strict=False)
    missing = [m for m in missing if "rotary" not in m]
    assert not missing and not unexpected, (missing, unexpected)
    return model.to(device=device, dtype=dtype)


# ------------------------------------------------------------------- the run

def run(outdir, device, dtype, tol):
    from peft import PeftModel

    run_cfg = json.load(open(os.path.join(outdir, "run.json")))
    torch.manual_seed(0)
    base = build_model(os.path.join(outdir, "model.gguf"), dtype, device)
    model = PeftModel.from_pretrained(base, os.path.join(outdir, "adapter_init"), is_trainable=True)
    model.train()   # lora_dropout is 0: train mode changes nothing else here
    params = [p for n, p in model.named_parameters() if p.requires_grad]
    assert params and all("lora_" in n for n, p in model.named_parameters() if p.requires_grad)
    opt = torch.optim.AdamW(params, lr=run_cfg["lr_peak"], betas=tuple(run_cfg["betas"]),
                            eps=run_cfg["eps"], weight_decay=run_cfg["weight_decay"],
                            foreach=False)
    worst = 0.0
    ok = True
    print("device %s dtype %s" % (device, dtype))
    print("step   ours        torch       rel diff   grad norm ours / torch")
    for s, step in enumerate(run_cfg["steps"]):
        opt.zero_grad(set_to_none=True)
        total = sum(sum(1 for y in ex["targets"] if y >= 0) for ex in step["batch"])
        loss_sum = 0.0
        for ex in step["batch"]:
            ids = torch.tensor([ex["tokens"]], device=device)
            tgt = torch.tensor(ex["targets"], device=device)
            logits = model(input_ids=ids).logits[0].float()
            l = F.cross_entropy(logits, tgt, ignore_index=-100, reduction="sum")
            (l / total).backward()
            loss_sum += l.item()
        gn = torch.nn.utils.clip_grad_norm_(params, run_cfg["max_grad_norm"]).item()
        for g in opt.param_groups:
            g["lr"] = step["lr"]
        opt.step()
        loss = loss_sum / total
        rel = abs(loss - step["loss"]) / abs(loss)
        worst = max(worst, rel)
        flag = "" if rel < tol else "  <-- above %.0e" % tol
        ok &= rel < tol
        print("%2d  %10.6f  %10.6f  %9.2e   %.4f / %.4f%s" % (s + 1, step["loss"], loss, rel,
                                                            step["grad_norm"], gn, flag))
    print("max relative loss difference over %d steps: %.3e (tolerance %.0e)" %
          (len(run_cfg["steps"]), worst, tol))

    # our final adapter, loaded by PEFT into a fresh model, against our logits
    fresh = build_model(os.path.join(outdir, "model.gguf"), dtype, device)
    pm = PeftModel.from_pretrained(fresh, os.path.join(outdir, "adapter_final"))
    pm.eval()
    with torch.no_grad():
        ids = torch.tensor([run_cfg["probe"]], device=device)
        logits = pm(input_ids=ids).logits[0].float().cpu().numpy()
    ours = np.array(run_cfg["probe_logits"], dtype=np.float64).reshape(logits.shape)
    diff = np.abs(logits - ours).max()
    scale = np.abs(ours).max()
    print("probe logits with our final adapter in PEFT: max abs diff %.3e (max |logit| %.2f)"
          % (diff, scale))
    ok &= diff < tol * scale
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--device", default="both", choices=["cpu", "cuda", "both"])
    args = ap.parse_args()
    import peft
    import transformers
    print("torch %s transformers %s peft %s" % (torch.__version__, transformers.__version__,
                                                peft.__version__))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ok = True
    if args.device in ("cpu", "both"):
        ok &= run(args.outdir, "cpu", torch.float32, 1e-3)
    if args.device in ("cuda", "both") and torch.cuda.is_available():
        ok &= run(args.outdir, "cuda", torch.float32, 1e-2)
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
