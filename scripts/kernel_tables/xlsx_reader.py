"""Minimal .xlsx reader using only the Python standard library.

read_workbook(path) -> {sheet_name: {row_number: {column_letters: value}}}
Values are str (shared/inline strings) or float/int (numbers) as stored
in the sheet XML (cached values of formulas are returned).  Row numbers
are the 1-based Excel row numbers, so a table row can cite "row 17".
"""
import re
import zipfile
import xml.etree.ElementTree as ET

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships"}
REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"


def _num(text):
    try:
        f = float(text)
    except ValueError:
        return text
    return int(f) if f.is_integer() and "e" not in text.lower() and "." not in text else f


def _shared_strings(z):
    try:
        root = ET.fromstring(z.read("xl/sharedStrings.xml"))
    except KeyError:
        return []
    out = []
    for si in root.findall("m:si", NS):
        out.append("".join(t.text or "" for t in si.iter("{%s}t" % NS["m"])))
    return out


def read_workbook(path):
    with zipfile.ZipFile(path) as z:
        ss = _shared_strings(z)
        wb = ET.fromstring(z.read("xl/workbook.xml"))
        rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
        target = {r.get("Id"): r.get("Target") for r in rels.findall("{%s}Relationship" % REL_NS)}
        sheets = {}
        for s in wb.find("m:sheets", NS).findall("m:sheet", NS):
            rid = s.get("{%s}id" % NS["r"])
            t = target[rid].lstrip("/")
            if not t.startswith("xl/"):
                t = "xl/" + t
            root = ET.fromstring(z.read(t))
            rows = {}
            for row in root.iter("{%s}row" % NS["m"]):
                rnum = int(row.get("r"))
                cells = {}
                for c in row.findall("m:c", NS):
                    ref = c.get("r")
                    col = re.match(r"[A-Z]+", ref).group(0)
                    typ = c.get("t")
                    v = c.find("m:v", NS)
                    if typ == "s" and v is not None:
                        val = ss[int(v.text)]
                    elif typ == "inlineStr":
                        val = "".join(t.text or "" for t in c.iter("{%s}t" % NS["m"]))
                    elif v is not None and v.text is not None:
                        val = v.text if typ in ("str", "e") else _num(v.text)
                    else:
                        continue
                    if isinstance(val, str):
                        val = val.strip()
                        if val == "":
                            continue
                    cells[col] = val
                if cells:
                    rows[rnum] = cells
            sheets[s.get("name")] = rows
        return sheets


def col_index(col):
    n = 0
    for ch in col:
        n = n * 26 + ord(ch) - 64
    return n


def row_values(cells):
    """Cells of a row as a list ordered by column (gaps -> None)."""
    if not cells:
        return []
    width = max(col_index(c) for c in cells)
    out = [None] * width
    for c, v in cells.items():
        out[col_index(c) - 1] = v
    return out
