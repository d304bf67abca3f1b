#!/usr/bin/env python3
"""A stand-in for a model server (vLLM's OpenAI-compatible server), for tests without a GPU.

It answers POST /v1/completions after the latency a serving model gives (the timings are
arguments: the test takes them from `hetsched plan service --json` for the replica's device
type), and GET /metrics in Prometheus text with vLLM's metric names, so that hetsched reads it
as it would read vLLM. Python 3 standard library only.

    stand_in_model_server.py --port 8000 --prefill-s 0.04 --decode-step-s 0.045 \
        [--max-batch 8] [--model llama-7b] [--pid-file FILE] [--metrics vllm|llamacpp]

Latency of one request: it waits for a place in the batch (at most --max-batch run at once),
then its prompt takes --prefill-s (for a prompt of --mean-input tokens, in proportion to its
length), then each generated token takes --decode-step-s. Prompt tokens are the prompt's
whitespace-separated words; generated tokens are the request's max_tokens (default 16). With "stream": true it answers
in OpenAI's server-sent events: the first token when the prompt is done, the rest at the end.
"""
import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# vLLM's bucket bounds (vllm/v1/metrics/loggers.py).
TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
                7.5, 10.0, 20.0, 40.0, 80.0]


class Histogram:
    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound
        self.total = 0.0

    def observe(self, value):
        i = 0
        while i < len(self.bounds) and value > self.bounds[i]:
            i += 1
        self.counts[i] += 1
        self.total += value

    def render(self, name, labels):
        lines, cumulative = [f"# TYPE {name} histogram"], 0
        for bound, count in zip(self.bounds + [None], self.counts):
            cumulative += count
            le = "+Inf" if bound is None else repr(float(bound))
            lines.append(f'{name}_bucket{{{labels},le="{le}"}} {float(cumulative)}')
        lines.append(f"{name}_sum{{{labels}}} {self.total}")
        lines.append(f"{name}_count{{{labels}}} {float(cumulative)}")
        return lines


class Server:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.slots = threading.Semaphore(args.max_batch)
        self.running = self.waiting = 0
        self.success = self.prompt_tokens = self.generation_tokens = 0
        self.ttft = Histogram(TTFT_BUCKETS)
        self.tpot = Histogram(TPOT_BUCKETS)

    def complete(self, prompt_tokens, output_tokens, first_token=None):
        """Waits as the request would take; calls first_token() once its prompt is done."""
        start = time.monotonic()
        with self.lock:
            self.waiting += 1
        self.slots.acquire()
        with self.lock:
            self.waiting -= 1
            self.running += 1
        try:
            time.sleep(self.args.prefill_s * prompt_tokens / self.args.mean_input)
            ttft = time.monotonic() - start
            if first_token:
                first_token()
            time.sleep(self.args.decode_step_s * output_tokens)
            tpot = (time.monotonic() - start - ttft) / max(1, output_tokens)
        finally:
            self.slots.release()
        with self.lock:
            self.running -= 1
            self.success += 1
            self.prompt_tokens += prompt_tokens
            self.generation_tokens += output_tokens
            self.ttft.observe(ttft)
            self.tpot.observe(tpot)

    def metrics(self):
        if self.args.metrics == "llamacpp":
            return self.llamacpp_metrics()
        labels = f'engine="0",model_name="{self.args.model}"'
        with self.lock:
            lines = [
                "# TYPE vllm:num_requests_running gauge",
                f"vllm:num_requests_running{{{labels}}} {float(self.running)}",
                "# TYPE vllm:num_requests_waiting gauge",
                f"vllm:num_requests_waiting{{{labels}}} {float(self.waiting)}",
                "# TYPE vllm:request_success_total counter",
                f'vllm:request_success_total{{{labels},finished_reason="length"}} '
                f"{float(self.success)}",
                "# TYPE vllm:prompt_tokens_total counter",
                f"vllm:prompt_tokens_total{{{labels}}} {float(self.prompt_tokens)}",
                "# TYPE vllm:generation_tokens_total counter",
                f"vllm:generation_tokens_total{{{labels}}} {float(self.generation_tokens)}",
            ]
            lines += self.ttft.render("vllm:time_to_first_token_seconds", labels)
            lines += self.tpot.render("vllm:time_per_output_token_seconds", labels)
        return "\n".join(lines) + "\n"

    def llamacpp_metrics(self):
        """llama.cpp server's names (tools/server/README.md): it counts no requests."""
        with self.lock:
            figures = [("requests_processing", "gauge", self.running),
                       ("requests_deferred", "gauge", self.waiting),
                       ("prompt_tokens_total", "counter", self.prompt_tokens),
                       ("tokens_predicted_total", "counter", self.generation_tokens)]
        lines = []
        for name, kind, value in figures:
            lines += [f"# TYPE llamacpp:{name} {kind}", f"llamacpp:{name} {float(value)}"]
        return "\n".join(lines) + "\n"


def handler_for(server):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet: the daemon keeps this process's output
            pass

        def reply(self, code, body, content_type="application/json"):
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/metrics":
                self.reply(200, server.metrics(), "text/plain; version=0.0.4")
            elif self.path == "/health":
                self.reply(200, "{}")
            else:
                self.reply(404, json.dumps({"error": "no route " + self.path}))

        def do_POST(self):
            if self.path != "/v1/completions":
                return self.reply(404, json.dumps({"error": "no route " + self.path}))
            try:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                prompt = body.get("prompt", "")
                output_tokens = int(body.get("max_tokens", 16))
            except (ValueError, AttributeError) as e:
                return self.reply(400, json.dumps({"error": f"bad request: {e}"}))
            prompt_tokens = max(1, len(str(prompt).split()))
            if body.get("stream"):
                return self.stream(prompt_tokens, output_tokens)
            server.complete(prompt_tokens, output_tokens)
            self.reply(200, json.dumps({
                "object": "text_completion",
                "model": server.args.model,
                "choices": [{"index": 0, "text": " token" * output_tokens,
                             "finish_reason": "length"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": output_tokens,
                          "total_tokens": prompt_tokens + output_tokens},
            }))

        def stream(self, prompt_tokens, output_tokens):
            """OpenAI's server-sent events: the first token once the prompt is done, the others
            in one event at the end (one write per token would cost more CPU than a test has)."""
            def event(text, finish=None):
                chunk = {"object": "text_completion", "model": server.args.model,
                         "choices": [{"index": 0, "text": text, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()

            def first_token():
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                event(" token")

            server.complete(prompt_tokens, output_tokens, first_token)
            event(" token" * (output_tokens - 1), "length")
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--prefill-s", type=float, required=True,
                   help="seconds to prefill a prompt of --mean-input tokens")
    p.add_argument("--mean-input", type=float, default=64)
    p.add_argument("--decode-step-s", type=float, required=True,
                   help="seconds per generated token")
    p.add_argument("--max-batch", type=int, default=8)
    p.add_argument("--model", default="llama-7b")
    p.add_argument("--pid-file", help="written with this process's id once it listens")
    p.add_argument("--metrics", choices=["vllm", "llamacpp"], default="vllm",
                   help="whose metric names GET /metrics uses")
    args = p.parse_args()
    # A backlog of 5 (the default) drops connections under a few dozen requests/s, and the
    # client's SYN retries add seconds to their TTFT.
    ThreadingHTTPServer.request_queue_size = 1024
    httpd = ThreadingHTTPServer((args.host, args.port), handler_for(Server(args)))
    httpd.daemon_threads = True
    if args.pid_file:
        with open(args.pid_file + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(args.pid_file + ".tmp", args.pid_file)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
