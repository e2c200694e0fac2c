"""wire.py — SPDY as the drafts write it down: frame types, flags, settings and status
codes, the zlib dictionaries of SPDY/2 and SPDY/3, header blocks through one zlib context
per direction, and frame building. Pure functions and data: no sockets, no sessions
(session.py gives frames their meaning).
"""
import struct
import zlib

# ---- constants from the drafts -------------------------------------------------------

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, NOOP = 1, 2, 3, 4, 5
PING, GOAWAY, HEADERS, WINDOW_UPDATE, CREDENTIAL = 6, 7, 8, 9, 10
FRAME_NAMES = {SYN_STREAM: "SYN_STREAM", SYN_REPLY: "SYN_REPLY", RST_STREAM: "RST_STREAM",
               SETTINGS: "SETTINGS", NOOP: "NOOP", PING: "PING", GOAWAY: "GOAWAY",
               HEADERS: "HEADERS", WINDOW_UPDATE: "WINDOW_UPDATE", CREDENTIAL: "CREDENTIAL"}

FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02
FLAG_SETTINGS_CLEAR = 0x01
SETTINGS_FLAG_PERSIST_VALUE = 0x01
SETTINGS_FLAG_PERSISTED = 0x02

SETTINGS_MAX_CONCURRENT_STREAMS = 4
SETTINGS_INITIAL_WINDOW_SIZE = 7
SETTINGS_NAMES = {1: "UPLOAD_BANDWIDTH", 2: "DOWNLOAD_BANDWIDTH", 3: "ROUND_TRIP_TIME",
                  4: "MAX_CONCURRENT_STREAMS", 5: "CURRENT_CWND",
                  6: "DOWNLOAD_RETRANS_RATE", 7: "INITIAL_WINDOW_SIZE",
                  8: "CLIENT_CERTIFICATE_VECTOR_SIZE"}

RST_PROTOCOL_ERROR, RST_INVALID_STREAM, RST_REFUSED_STREAM = 1, 2, 3
RST_CANCEL, RST_FLOW_CONTROL_ERROR, RST_STREAM_IN_USE, RST_STREAM_ALREADY_CLOSED = 5, 7, 8, 9
RST_NAMES = {1: "PROTOCOL_ERROR", 2: "INVALID_STREAM", 3: "REFUSED_STREAM",
             4: "UNSUPPORTED_VERSION", 5: "CANCEL", 6: "INTERNAL_ERROR",
             7: "FLOW_CONTROL_ERROR", 8: "STREAM_IN_USE", 9: "STREAM_ALREADY_CLOSED",
             10: "INVALID_CREDENTIALS", 11: "FRAME_TOO_LARGE"}
GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR = 0, 1, 2  # NOTES.md: 2, not 11

DEFAULT_WINDOW = 65536          # SPDY/3 2.6.8, SPDY/3.1 2.6.8: streams and session
MAX_WINDOW = 0x7FFFFFFF
DATA_CHUNK = 16384              # our DATA frames carry at most this much
MAX_HEADER_BLOCK = 1 << 20      # a decompressed header block larger than this is refused

VERSIONS = ("2", "3", "3.1")
ALPN_IDS = {"2": "spdy/2", "3": "spdy/3", "3.1": "spdy/3.1"}

# ---- the zlib dictionaries -------------------------------------------------------------

# SPDY/2 (draft 2, "Name/Value header block format"; NOTES.md has the exact text): this
# text without line breaks, followed by one NUL byte, 907 bytes.
DICT_V2 = (
    b"optionsgetheadpostputdeletetraceacceptaccept-charsetaccept-encodingaccept-"
    b"languageauthorizationexpectfromhostif-modified-sinceif-matchif-none-matchi"
    b"f-rangeif-unmodifiedsincemax-forwardsproxy-authorizationrangerefererteuser"
    b"-agent10010120020120220320420520630030130230330430530630740040140240340440"
    b"5406407408409410411412413414415416417500501502503504505accept-rangesageeta"
    b"glocationproxy-authenticatepublicretry-afterservervarywarningwww-authentic"
    b"ateallowcontent-basecontent-encodingcache-controlconnectiondatetrailertran"
    b"sfer-encodingupgradeviawarningcontent-languagecontent-lengthcontent-locati"
    b"oncontent-md5content-rangecontent-typeetagexpireslast-modifiedset-cookieMo"
    b"ndayTuesdayWednesdayThursdayFridaySaturdaySundayJanFebMarAprMayJunJulAugSe"
    b"pOctNovDecchunkedtext/htmlimage/pngimage/jpgimage/gifapplication/xmlapplic"
    b"ation/xhtmltext/plainpublicmax-agecharset=iso-8859-1utf-8gzipdeflateHTTP/1"
    b".1statusversionurl\x00")

# SPDY/3 and 3.1 (draft-mbelshe-httpbis-spdy-00 2.6.10.1, 1,423 bytes): words each with a
# 32-bit big-endian length in front, then plain text. `dictionaries` re-reads the hex
# table from the draft and compares.
_V3_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding "
    "accept-language accept-ranges age allow authorization cache-control connection "
    "content-base content-encoding content-language content-length content-location "
    "content-md5 content-range content-type date etag expect expires from host if-match "
    "if-modified-since if-none-match if-range if-unmodified-since last-modified location "
    "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after "
    "server te trailer transfer-encoding upgrade user-agent vary via warning "
    "www-authenticate method get status").split() + [
    "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin"]
_V3_TAIL = (
    b"100101201202205206300302303304305306307402405406407408409410411412413414415416417"
    b"502504505203 Non-Authoritative Information204 No Content301 Moved Permanently"
    b"400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error"
    b"501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct "
    b"Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,"
    b"image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
    b"publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
DICT_V3 = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _V3_WORDS) + _V3_TAIL

assert len(DICT_V2) == 907 and zlib.adler32(DICT_V2) == 0xDFA251B2
assert len(DICT_V3) == 1423 and zlib.adler32(DICT_V3) == 0xE3C6A7C2


def dictionary_for(version):
    return DICT_V2 if version == "2" else DICT_V3


class Violation(Exception):
    """Something the peer sent that its version does not allow."""


# ---- header blocks -------------------------------------------------------------------

class HeaderCodec:
    """One zlib stream per direction for the whole session (SPDY/3 2.6.10.1: "a single
    zlib stream for all name value pairs in one direction on a connection"), each primed
    with the version's dictionary, a SYNC_FLUSH after every block."""

    def __init__(self, version):
        self.version = version
        self.dictionary = dictionary_for(version)
        self.deflater = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY,
                                         self.dictionary)
        self.inflater = zlib.decompressobj(zdict=self.dictionary)
        self.blocks_in = 0
        self.broken = False

    def encode(self, headers):
        """headers: list of (name, value) str pairs, names unique and lower case."""
        wide = self.version != "2"
        fmt = ">I" if wide else ">H"
        out = bytearray(struct.pack(fmt, len(headers)))
        for name, value in headers:
            for field in (name.encode("latin-1"), value.encode("latin-1")):
                out += struct.pack(fmt, len(field)) + field
        return self.deflater.compress(bytes(out)) + self.deflater.flush(zlib.Z_SYNC_FLUSH)

    def decode(self, block):
        """Returns the header list; raises Violation (the session is then unusable)."""
        if self.broken:
            raise Violation("header compression state already broken")
        self.broken = True  # until this block is fully understood
        if self.blocks_in == 0:
            if len(block) < 6:
                raise Violation("first header block of %d bytes cannot hold a zlib header "
                                "with a dictionary id" % len(block))
            cmf, flg = block[0], block[1]
            if cmf & 0x0F != 8 or (cmf << 8 | flg) % 31 != 0:
                raise Violation("first header block does not start with a zlib header "
                                "(%02x %02x)" % (cmf, flg))
            if not flg & 0x20:
                raise Violation("first header block is not compressed with the SPDY/%s "
                                "dictionary (FDICT not set)" % self.version)
            dict_id = struct.unpack(">I", block[2:6])[0]
            if dict_id != zlib.adler32(self.dictionary):
                raise Violation("first header block names dictionary %08x, SPDY/%s's is %08x"
                                % (dict_id, self.version, zlib.adler32(self.dictionary)))
        if not block.endswith(b"\x00\x00\xff\xff"):
            raise Violation("header block does not end with a zlib SYNC_FLUSH "
                            "(00 00 ff ff): ends %s" % block[-4:].hex())
        try:
            plain = self.inflater.decompress(block, MAX_HEADER_BLOCK)
        except zlib.error as e:
            raise Violation("header block does not inflate with the SPDY/%s dictionary "
                            "through the session's zlib stream: %s" % (self.version, e))
        if self.inflater.unconsumed_tail:
            raise Violation("header block inflates to more than %d bytes" % MAX_HEADER_BLOCK)
        if self.inflater.eof:
            raise Violation("header block ends the zlib stream (a final block was sent)")
        self.blocks_in += 1
        headers = parse_name_values(self.version, plain)
        self.broken = False
        return headers


def parse_name_values(version, plain):
    """The Name/Value block: 16-bit counts and lengths in SPDY/2, 32-bit in SPDY/3."""
    size, fmt = (2, ">H") if version == "2" else (4, ">I")
    pos = 0

    def take_length(what):
        nonlocal pos
        if len(plain) - pos < size:
            raise Violation("header block truncated in the length of %s" % what)
        n = struct.unpack(fmt, plain[pos:pos + size])[0]
        pos += size
        if n > len(plain) - pos:
            raise Violation("header block: %s of %d bytes, only %d left" % (
                what, n, len(plain) - pos))
        field = plain[pos:pos + n]
        pos += n
        return field

    if len(plain) < size:
        raise Violation("header block of %d bytes has no pair count" % len(plain))
    count = struct.unpack(fmt, plain[:size])[0]
    pos = size
    headers = []
    seen = set()
    for i in range(count):
        name = take_length("name %d" % (i + 1))
        value = take_length("value %d" % (i + 1))
        if not name:
            raise Violation("header name %d is empty" % (i + 1))
        if b"\x00" in name:
            raise Violation("header name %r contains a NUL" % name)
        if name.lower() != name:
            raise Violation("header name %r is not lower case" % name)
        if name in seen:
            raise Violation("header name %r appears twice (values must be NUL-joined)" % name)
        seen.add(name)
        if version == "2" and not value:
            raise Violation("header %r has an empty value (SPDY/2 requires length > 0)" % name)
        if value and (value.startswith(b"\x00") or value.endswith(b"\x00") or b"\x00\x00" in value):
            raise Violation("header %r has an empty NUL-separated value" % name)
        headers.append((name.decode("latin-1"), value.decode("latin-1")))
    if pos != len(plain):
        raise Violation("header block has %d bytes after its %d pairs" % (len(plain) - pos, count))
    return headers


# ---- frames --------------------------------------------------------------------------

def control_frame(wire_version, ftype, flags, payload):
    return struct.pack(">HHI", 0x8000 | wire_version, ftype, flags << 24 | len(payload)) + payload


def data_frame(stream_id, flags, payload):
    return struct.pack(">II", stream_id, flags << 24 | len(payload)) + payload


def flag_names(ftype, flags):
    names = []
    if ftype == SETTINGS:
        if flags & FLAG_SETTINGS_CLEAR:
            names.append("CLEAR_SETTINGS")
    else:
        if flags & FLAG_FIN:
            names.append("FIN")
        if flags & FLAG_UNIDIRECTIONAL and ftype == SYN_STREAM:
            names.append("UNIDIRECTIONAL")
    return "|".join(names) or "0"
