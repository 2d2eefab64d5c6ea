#!/usr/bin/env python3
"""An independent implementation of cache-format/SPEC.md that writes vectors.json.

It shares no code with the Rust implementation (src/cache/, src/artifact.rs), so the Rust
unit tests that read vectors.json check the two against each other. It needs the `blake3`
and `lz4` packages from PyPI (`pip install blake3 lz4`); nothing in CI runs it.

    python3 cache-format/make_vectors.py > cache-format/vectors.json
"""

import json
import struct
import sys

import lz4.frame
from blake3 import blake3

KEY_CONTEXT = "agent-bundle 2026-12-02 cache action key v1"
RECORD_FORMAT = "agent-bundle-action/1"


def object_name(data: bytes) -> str:
    return blake3(data).hexdigest()


def key_preimage(kind: str, fields) -> bytes:
    def lp(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    out = lp(kind.encode())
    for name, value in fields:
        out += lp(name.encode()) + lp(value)
    return out


def action_key(kind: str, fields) -> str:
    return blake3(key_preimage(kind, fields), derive_key_context=KEY_CONTEXT).hexdigest()


def canonical_json(value) -> str:
    # sort_keys sorts by code point, which is UTF-8 byte order; ensure_ascii=False leaves
    # everything raw except '"', '\\' and U+0000..U+001F (short escapes, else \\u00xx).
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def manifest_json(value) -> str:
    # As a build writes an artifact's manifest: two-space indents, keys sorted, a newline
    # at the end; so it begins `{\n  "compiler": {\n    "name": "agent-bundle",` (§5.1).
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def record_file(body: str) -> str:
    return body + "\n" + blake3(body.encode()).hexdigest() + "\n"


def record_body(outputs, values) -> str:
    return canonical_json({"format": RECORD_FORMAT, "outputs": outputs, "values": values})


def field_json(name, value: bytes):
    try:
        return {"name": name, "value_utf8": value.decode()}
    except UnicodeDecodeError:
        return {"name": name, "value_hex": value.hex()}


def pack_vector(frame_options):
    """An artifact of three files, its manifest, and the pack of them as one LZ4 frame (§5.1)."""
    runtime = "export function runHook(spec, handler) { return handler(spec); }\n" * 40
    files = [
        ("bin/run", b"#!/bin/sh\necho hi\n", True, "prebuilt"),
        ("hooks/a.claude.mjs", (runtime + "// a\n").encode(), False, "bundle"),
        ("hooks/b.claude.mjs", (runtime + "// b\n").encode(), False, "bundle"),
    ]
    rows = []
    for path, data, executable, kind in files:
        row = {"path": path, "bytes": len(data), "blake3": object_name(data), "kind": kind}
        if executable:
            row["executable"] = True
        rows.append(row)
    compiler = {"name": "agent-bundle", "version": "0.1.0"}
    listed = {"compiler": compiler, "plugin": {"name": "vector", "version": "1.0.0"}, "targets": ["claude"], "files": rows}
    manifest = manifest_json(listed).encode()
    contents = manifest + b"".join(data for _, data, _, _ in files)
    frame = lz4.frame.compress(contents, **frame_options)
    assert lz4.frame.decompress(frame) == contents
    return {
        "files": [
            {"path": path, "bytes_hex": data.hex(), "executable": executable, "kind": kind}
            for path, data, executable, kind in files
        ],
        "manifest_utf8": manifest.decode(),
        "values": {"manifest": object_name(manifest), "manifestBytes": str(len(manifest)), "packEncoding": "lz4-frame"},
        "pack_hex": frame.hex(),
    }


def main():
    objects = []
    for data in [b"", b"export const a = 1;\n", bytes(range(256)), "\u00e9\u00e8 \U0001f600\n".encode()]:
        name = object_name(data)
        entry = {"bytes_hex": data.hex(), "name": name, "path": f"v1/cas/{name[:2]}/{name}"}
        objects.append(entry)

    source_hash = bytes.fromhex(object_name(b"export const a = 1;\n"))
    key_inputs = [
        ("module-chunk", []),
        ("module-chunk", [("compiler", b"agent-bundle 0.1.0"), ("source", source_hash)]),
        ("module-chunk", [("source", source_hash), ("compiler", b"agent-bundle 0.1.0")]),
        ("split", [("ab", b"c")]),
        ("split", [("a", b"bc")]),
        ("", [("", b"")]),
        ("wrapper", [("options", b'{"minify":false}'), ("bytes", bytes([0, 255, 10]))]),
    ]
    keys = []
    for kind, fields in key_inputs:
        key = action_key(kind, fields)
        keys.append({
            "kind": kind,
            "fields": [field_json(n, v) for n, v in fields],
            "preimage_hex": key_preimage(kind, fields).hex(),
            "key": key,
            "path": f"v1/ac/{key[:2]}/{key}",
        })

    # The `artifact` key (SPEC §5.1) of a project's settings and input files, for a made-up
    # compiler string (the real one names the binary's sources).
    artifact_cases = [
        {"config": None, "targets": None, "files": [
            {"path": "agent-bundle.config.ts", "executable": False, "utf8": "export default {};\n"},
            {"path": "src/hooks/stop.ts", "executable": False, "utf8": "export default () => {};\n"},
        ]},
        {"config": "plugin.config.ts", "targets": ["codex", "claude"], "files": [
            {"path": "../shared/log.ts", "executable": False, "utf8": "export const log = [];\n"},
            {"path": "bin/run.sh", "executable": True, "utf8": "#!/bin/sh\n"},
            {"path": "plugin.config.ts", "executable": False, "utf8": "export default {};\n"},
            {"path": "secret.txt", "executable": False, "unreadable": True},
        ]},
    ]
    compiler = "agent-bundle 0.1.0 actions/11 source/0123456789abcdef"
    artifact_keys = []
    for case in artifact_cases:
        fields = [("compiler", compiler.encode())]
        if case["config"] is not None:
            fields.append(("config", case["config"].encode()))
        for target in case["targets"] or []:
            fields.append(("target", target.encode()))
        for f in sorted(case["files"], key=lambda f: f["path"].encode()):
            fields.append(("path", f["path"].encode()))
            fields.append(("executable", b"1" if f["executable"] else b"0"))
            if f.get("unreadable"):
                fields.append(("unreadable", b""))
            else:
                fields.append(("source", object_name(f["utf8"].encode()).encode()))
        artifact_keys.append({"compiler": compiler, **case, "key": action_key("artifact", fields)})

    h = object_name
    record_inputs = [
        ({}, {}),
        ({"module.js": h(b"export const a = 1;\n")}, {}),
        (
            {"wrapper.mjs": h(b""), "a/b.json": h(bytes(range(256)))},
            {"z": "last", "a": "first", "empty": ""},
        ),
        (
            {},
            {
                "quote\"backslash\\slash/": "tab\tnl\nret\rbs\bff\fnul\x00us\x1fdel\x7f",
                "\u00e9": "\u00e9t\u00e9",
                "\uff61": "U+FF61 sorts before U+1F600 in UTF-8 byte order",
                "\U0001f600": "astral",
                "Z": "upper case sorts first",
            },
        ),
    ]
    records = []
    for outputs, values in record_inputs:
        body = record_body(outputs, values)
        records.append({"outputs": outputs, "values": values, "file_utf8": record_file(body)})

    good = record_body({"m.js": h(b"")}, {"k": "v"})
    hexes = blake3(good.encode()).hexdigest()
    invalid = [
        ("truncated trailer", record_file(good)[:-2]),
        ("no trailing newline", record_file(good)[:-1]),
        ("flipped body byte", record_file(good).replace('"v"', '"w"', 1)),
        ("wrong trailer", good + "\n" + object_name(b"x") + "\n"),
        ("upper-case trailer", good + "\n" + hexes.upper() + "\n"),
        ("whitespace in body", record_file(good.replace(",", ", "))),
        ("keys out of order", record_file('{"outputs":{"m.js":"%s"},"format":"%s","values":{"k":"v"}}' % (h(b""), RECORD_FORMAT))),
        ("escaped slash", record_file(record_body({}, {"a/b": "c"}).replace("/", "\\/"))),
        ("non-minimal escape", record_file(record_body({}, {"\u00e9": "x"}).replace("\u00e9", "\\u00e9"))),
        ("upper-case output hash", record_file(good.replace(h(b""), h(b"").upper()))),
        ("unknown format", record_file(good.replace(RECORD_FORMAT, "agent-bundle-action/2"))),
        ("extra top-level key", record_file(good[:-1] + ',"z":{}}')),
        ("non-string value", record_file(record_body({}, {}).replace('"values":{}', '"values":{"n":1}'))),
        ("duplicate key", record_file(record_body({}, {"k": "v"}).replace('{"k":"v"}', '{"k":"v","k":"v"}'))),
        ("empty file", ""),
    ]

    packs = []
    for how, options in [
        ("Python's lz4.frame defaults: linked 64 KiB blocks, content size", {}),
        ("content and block checksums, no content size", {"content_checksum": True, "block_checksum": True, "store_size": False}),
    ]:
        packs.append({"why": how, **pack_vector(options)})

    vectors = {
        "format": "agent-bundle-cache/1",
        "about": "Test vectors for cache-format/SPEC.md; generated by make_vectors.py, checked by src/cache/tests.rs.",
        "key_context": KEY_CONTEXT,
        "record_format": RECORD_FORMAT,
        "objects": objects,
        "keys": keys,
        "artifact_keys": artifact_keys,
        "records": records,
        "invalid_records": [{"why": why, "file_utf8": text} for why, text in invalid],
        "packs": packs,
    }
    json.dump(vectors, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
