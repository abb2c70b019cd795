#!/usr/bin/env python3
# png_palette.py IN.png OUT.png: re-encodes an RGB screenshot (Chromium's) as a 256-colour
# indexed PNG, about 3x smaller: the 256 most frequent colours are kept exactly (white, text,
# series colours), every other one (antialiased edges) becomes the nearest of them. Standard
# library only (no Pillow in Debian's base image).
import struct, sys, zlib
def chunks(data):
    pos = 8
    while pos < len(data):
        n = struct.unpack('>I', data[pos:pos+4])[0]
        yield data[pos+4:pos+8], data[pos+8:pos+8+n]; pos += 12 + n
def chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)
data = open(sys.argv[1], 'rb').read()
cs = list(chunks(data)); w, h, depth, ctype = struct.unpack('>IIBB', cs[0][1][:10]); assert depth == 8 and ctype == 2
raw = zlib.decompress(b''.join(b for k, b in cs if k == b'IDAT')); stride = w * 3
rows, prev = [], bytearray(stride)
for y in range(h):
    f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(3, stride): line[i] = (line[i] + line[i - 3]) & 255
    elif f == 2:
        for i in range(stride): line[i] = (line[i] + prev[i]) & 255
    elif f == 3:
        for i in range(stride): line[i] = (line[i] + ((line[i - 3] if i >= 3 else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0; b = prev[i]; c = prev[i - 3] if i >= 3 else 0
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line)); prev = line
# The 256 most frequent colours exactly (white, text, series colours), every other colour (edge
# antialiasing) mapped to the nearest of them.
from collections import Counter
px = [[r[i:i+3] for i in range(0, stride, 3)] for r in rows]
counts = Counter(p for r in px for p in r)
kept = [c for c, _ in counts.most_common(256)]
colours = {c: i for i, c in enumerate(kept)}
for c in counts:
    if c not in colours:
        colours[c] = min(range(len(kept)), key=lambda i: sum((a - b) ** 2 for a, b in zip(c, kept[i])))
mask = len(counts)
palette = b''.join(kept)
body = b''.join(b'\x00' + bytes(colours[p] for p in r) for r in px)
ihdr = struct.pack('>IIBBBBB', w, h, 8, 3, 0, 0, 0)
open(sys.argv[2], 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + chunk(b'PLTE', palette) + chunk(b'IDAT', zlib.compress(body, 9)) + chunk(b'IEND', b''))

