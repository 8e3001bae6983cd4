"""Reads timeline files back with OpenTimelineIO's own adapters: an independent reader of
what Cutroom writes (test/editing/frames-agree.test.ts).

Input (stdin): one JSON object a line, {"path", "adapter", "rate": [num, den]} (the EDL's
rate is passed to the cmx_3600 adapter, which cannot read it from the file). Output
(stdout): one JSON object a line in the same order, {"tracks": [{"name", "kind", "clips":
[{"name", "url", "source_in", "record_in", "duration"}]}]} with every time in whole frames
of the given rate, or {"error": "..."} when the adapter refused the file.
"""

import contextlib
import json
import sys

import opentimelineio as otio


def frames(time, rate):
    return round(time.rescaled_to(rate).value)


def clip_facts(clip, rate):
    reference = clip.media_reference
    url = getattr(reference, "target_url", None) if reference is not None else None
    record = clip.range_in_parent()
    return {
        "name": clip.name,
        "url": url,
        "source_in": frames(clip.source_range.start_time, rate) if clip.source_range is not None else None,
        "record_in": frames(record.start_time, rate),
        "duration": frames(record.duration, rate),
    }


def read(request):
    num, den = request["rate"]
    rate = num / den
    options = {"rate": rate} if request["adapter"] == "cmx_3600" else {}
    timeline = otio.adapters.read_from_file(request["path"], adapter_name=request["adapter"], **options)
    tracks = []
    for track in timeline.tracks:
        clips = [clip_facts(child, rate) for child in track if isinstance(child, otio.schema.Clip)]
        tracks.append({"name": track.name, "kind": track.kind, "clips": clips})
    return {"tracks": tracks}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            # an adapter that prints its progress (the FCPXML lite one does) prints it to stderr, not into the answers
            with contextlib.redirect_stdout(sys.stderr):
                answer = read(json.loads(line))
        except Exception as error:  # the adapter's refusal is the answer, not the end of the batch
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
