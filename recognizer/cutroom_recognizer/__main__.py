"""A faster-whisper worker: loads one model once, then transcribes one request at a time.

`python -m cutroom_recognizer --weights base` reads requests from stdin, one JSON object a
line, and writes JSON lines to stdout (the Node server in recognizer/server drives it):

    → {"ready": {"weights", "device", "compute_type", "languages"}}     once the model is loaded
    ← {"audio": "/path/audio.raw", "language": "en" | null, "prompt": str | null}
    → {"result": {"language", "language_probability", "duration", "segments": [...]}}
    → {"error": {"kind": "unsupported-language" | "recognizer-failed", "message": str}}

The audio is 16 kHz mono 16-bit little-endian PCM (ffmpeg decodes uploads before this).
Diagnostics go to stderr. A request is stopped by ending the process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

# Nothing is ever fetched from a model hub: the weights are a local directory.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import ctranslate2  # noqa: E402
import numpy as np  # noqa: E402

from faster_whisper.tokenizer import _LANGUAGE_CODES  # noqa: E402

from .weights import DEFAULT_WEIGHTS, WEIGHTS, Weights, WeightsMissing, model_dir  # noqa: E402

SAMPLE_RATE = 16_000

# Whisper's known failure over non-speech (text made up over room tone, music or silence):
# only what the voice-activity detector hears as speech is decoded, no window is conditioned
# on the text before it (a made-up phrase is not carried on), and a segment is dropped when
# the model itself rates it as no speech, as repetitive, or as improbable.
DECODE_OPTIONS: dict[str, Any] = {
    "beam_size": 5,
    "word_timestamps": True,
    "condition_on_previous_text": False,
    "vad_filter": True,
    "vad_parameters": {"min_silence_duration_ms": 500, "speech_pad_ms": 200},
    "no_speech_threshold": 0.6,
    "log_prob_threshold": -1.0,
    "compression_ratio_threshold": 2.4,
    "hallucination_silence_threshold": 2.0,
}

#: Whisper as it decodes with none of the above: what the tests compare the guards against (--no-guards).
UNGUARDED_OPTIONS: dict[str, Any] = {
    "beam_size": 5,
    "word_timestamps": True,
    "condition_on_previous_text": True,
    "vad_filter": False,
    "no_speech_threshold": None,
    "log_prob_threshold": None,
    "compression_ratio_threshold": None,
}

#: The languages multilingual Whisper weights know, by ISO 639-1 code.
WHISPER_LANGUAGES = frozenset(_LANGUAGE_CODES)

#: Whisper decodes a window again by sampling at a higher temperature when the greedy
#: result fails the filters above; CTranslate2 draws those samples from a generator seeded
#: at random when the process starts, so the same audio could come back as other words.
#: The seed is fixed, but CTranslate2 keeps its generator per decoding thread, made from the
#: seed when that thread first samples: after a request that sampled, the worker builds its
#: decoder anew (new threads), so every request samples from the same start
#: (docs/decisions.md, issue 38, "Determinism").
SAMPLING_SEED = 38

#: A quiet sentence among loud ones (a voice turned away from the microphone, a second speaker
#: across the room): Whisper decodes each window against its loudest sound and writes nothing
#: for speech 30–40 dB under it, though the voice-activity detector hears that speech and Whisper
#: transcribes it alone. So a stretch the detector hears whose peak lies QUIET_STRETCH_DB or more
#: under the loudest stretch's is raised to that peak, by at most QUIET_STRETCH_MAX_GAIN_DB. The
#: samples do not move, so every time stays; stretches within QUIET_STRETCH_DB of the loudest are
#: left as they are (docs/decisions.md, "A voice too faint for any level").
QUIET_STRETCH_DB = 20.0
QUIET_STRETCH_MAX_GAIN_DB = 30.0

#: A segment the model thinks is likely not speech and that it decoded with little confidence.
NO_SPEECH_DROP = 0.5
LOW_LOGPROB_DROP = -0.8


def emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def choose_device(requested: str) -> str:
    if requested != "auto":
        return requested
    return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"


def rounded(value: float) -> float:
    return round(float(value), 3)


class SamplingWatch:
    """CTranslate2's Whisper model as faster-whisper calls it, noting whether a decode drew samples.

    faster-whisper may sample a window and then drop it (no speech, improbable), so the
    segments it yields do not tell; its fallback asks `generate` for samples (`sampling_topk`
    other than 1) and that call does.
    """

    def __init__(self, model: Any) -> None:
        self._model = model
        self.sampled = False

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("sampling_topk", 1) != 1:
            self.sampled = True
        return self._model.generate(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class Decoder:
    """faster-whisper's model, whose CTranslate2 decoder is made anew after a request that sampled."""

    def __init__(self, directory: str, device: str, compute_type: str, threads: int, guarded: bool, sampling_temperature: float | None) -> None:
        from faster_whisper import WhisperModel

        self.model = WhisperModel(directory, device=device, compute_type=compute_type, cpu_threads=threads, local_files_only=True)
        self._made = {"model_path": directory, "device": device, "compute_type": compute_type, "intra_threads": threads}
        self._watch = SamplingWatch(self.model.model)
        self.model.model = self._watch
        self.options = dict(DECODE_OPTIONS if guarded else UNGUARDED_OPTIONS)
        if sampling_temperature is not None:
            self.options["temperature"] = [sampling_temperature]
        self.guarded = guarded

    def renew_if_sampled(self) -> None:
        """The decoding threads that drew samples end with the old decoder (freed first: one in memory)."""
        if not self._watch.sampled:
            return
        self.model.model = self._watch = None
        self._watch = SamplingWatch(ctranslate2.models.Whisper(**self._made))
        self.model.model = self._watch


def quiet_stretches_raised(samples: np.ndarray, vad_parameters: dict[str, Any]) -> np.ndarray:
    """The samples with each stretch Silero hears QUIET_STRETCH_DB or more under the loudest raised to the loudest's peak."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    stretches = [(chunk["start"], chunk["end"]) for chunk in get_speech_timestamps(samples, VadOptions(**vad_parameters)) if chunk["end"] > chunk["start"]]
    peaks = [float(np.max(np.abs(samples[start:end]))) for start, end in stretches]
    loudest = max(peaks, default=0.0)
    raised = samples
    for (start, end), peak in zip(stretches, peaks):
        if peak <= 0 or peak > loudest * 10 ** (-QUIET_STRETCH_DB / 20):
            continue
        if raised is samples:
            raised = samples.copy()
        raised[start:end] *= min(loudest / peak, 10 ** (QUIET_STRETCH_MAX_GAIN_DB / 20))
    return raised


def transcribe(decoder: Decoder, weights: Weights, request: dict[str, Any]) -> dict[str, Any]:
    languages = weights.languages
    language = request.get("language") or None
    if language is not None and language not in (languages or WHISPER_LANGUAGES):
        known = ", ".join(sorted(languages)) if languages else "ISO 639-1 codes such as en, es, pt"
        return {"error": {"kind": "unsupported-language", "message": f"Language '{language}' is not one these weights ({weights.name}) transcribe: {known}."}}
    samples = np.fromfile(request["audio"], dtype="<i2").astype(np.float32) / 32768.0
    guarded = decoder.guarded
    if languages is not None and len(languages) == 1:
        language = language or next(iter(languages))
    prompt = request.get("prompt") or None
    if guarded:
        samples = quiet_stretches_raised(samples, decoder.options["vad_parameters"])
    segments, info = decoder.model.transcribe(samples, language=language, initial_prompt=prompt, **decoder.options)
    kept = []
    for segment in segments:
        if guarded and segment.no_speech_prob > NO_SPEECH_DROP and segment.avg_logprob < LOW_LOGPROB_DROP:
            continue
        words = [
            {"word": word.word, "start": rounded(word.start), "end": rounded(word.end), "probability": rounded(word.probability)}
            for word in segment.words or []
            if word.word.strip()
        ]
        if not words:
            continue
        kept.append(
            {
                "start": rounded(segment.start),
                "end": rounded(segment.end),
                "text": segment.text,
                "tokens": list(segment.tokens),
                "temperature": rounded(segment.temperature or 0),
                "avg_logprob": rounded(segment.avg_logprob),
                "compression_ratio": rounded(segment.compression_ratio),
                "no_speech_prob": rounded(segment.no_speech_prob),
                "words": words,
            }
        )
    return {
        "result": {
            "language": info.language,
            "language_probability": rounded(info.language_probability),
            "duration": rounded(info.duration),
            "segments": kept,
        }
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cutroom_recognizer")
    parser.add_argument("--weights", default=os.environ.get("WHISPER_WEIGHTS", DEFAULT_WEIGHTS), choices=sorted(WEIGHTS))
    parser.add_argument("--device", default=os.environ.get("WHISPER_DEVICE", "auto"), choices=["auto", "cpu", "cuda"])
    parser.add_argument("--compute-type", default=os.environ.get("WHISPER_COMPUTE_TYPE", ""))
    parser.add_argument("--no-guards", action="store_true", help="decode without the guards against made-up text (a diagnostic; the tests use it to show what the guards remove)")
    parser.add_argument("--sampling-temperature", type=float, default=None, help="decode every window by sampling at this temperature (a diagnostic: the test that shows sampled decodes repeat uses it)")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("WHISPER_THREADS", "0")))
    args = parser.parse_args()

    try:
        directory = model_dir(args.weights)
    except WeightsMissing as error:
        emit({"error": {"kind": "recognizer-failed", "message": str(error)}})
        sys.exit(2)
    device = choose_device(args.device)
    compute_type = args.compute_type or ("float16" if device == "cuda" else "int8")
    ctranslate2.set_random_seed(SAMPLING_SEED)
    decoder = Decoder(str(directory), device, compute_type, args.threads, not args.no_guards, args.sampling_temperature)
    weights = WEIGHTS[args.weights]
    languages = sorted(weights.languages) if weights.languages else None
    emit({"ready": {"weights": weights.name, "device": device, "compute_type": compute_type, "languages": languages}})

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            emit(transcribe(decoder, weights, json.loads(line)))
        except Exception as error:  # one bad request is answered, and the worker goes on
            print(f"cutroom_recognizer: {error!r}", file=sys.stderr, flush=True)
            emit({"error": {"kind": "recognizer-failed", "message": str(error) or type(error).__name__}})
        # between requests, so the next one does not wait on it unless it came at once; a decoder
        # that cannot be made again ends the worker (the pool starts another)
        decoder.renew_if_sampled()


if __name__ == "__main__":
    main()
