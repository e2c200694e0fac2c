/* names.c — versions, error sentences, protocol and frame names, plaintext sniffing:
 * the small pure functions of the public API. */
#include <string.h>

#include "frame.h"
#include "h2_frame.h"
#include "speedy/speedy.h"

const char *speedy_version(void) { return SPEEDY_VERSION_STRING; }

const char *speedy_strerror(int error) {
  switch (error) {
  case SPEEDY_OK:
    return "success";
  case SPEEDY_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case SPEEDY_ERR_NOMEM:
    return "out of memory";
  case SPEEDY_ERR_DEFERRED:
    return "data not ready yet";
  case SPEEDY_ERR_PAUSE:
    return "paused by the application";
  case SPEEDY_ERR_CALLBACK_FAILURE:
    return "a callback failed";
  case SPEEDY_ERR_PROTOCOL:
    return "the peer violated the protocol";
  case SPEEDY_ERR_COMPRESSION:
    return "a header block could not be decompressed";
  case SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE:
    return "a header block is larger than allowed";
  case SPEEDY_ERR_FRAME_TOO_LARGE:
    return "a frame is larger than allowed";
  case SPEEDY_ERR_UNSUPPORTED_VERSION:
    return "the peer used another SPDY version";
  case SPEEDY_ERR_FLOW_CONTROL:
    return "the peer violated flow control";
  case SPEEDY_ERR_STREAM_NOT_FOUND:
    return "no such stream";
  case SPEEDY_ERR_STREAM_CLOSED:
    return "the stream is closed";
  case SPEEDY_ERR_STREAM_ID_EXHAUSTED:
    return "no stream ids left on this session";
  case SPEEDY_ERR_SESSION_CLOSING:
    return "the session is going away";
  case SPEEDY_ERR_INVALID_STATE:
    return "not allowed in this state";
  case SPEEDY_ERR_INVALID_HEADER:
    return "invalid header field";
  case SPEEDY_ERR_FLOOD:
    return "the peer flooded the session with frames that need answers";
  case SPEEDY_ERR_WINDOW_OVERFLOW:
    return "flow control window would exceed 2^31-1";
  case SPEEDY_ERR_TOO_MANY_STREAMS:
    return "too many streams waiting to open";
  case SPEEDY_ERR_SETTINGS_TIMEOUT:
    return "the peer did not acknowledge our SETTINGS in time";
  default:
    return "unknown error";
  }
}

int speedy_error_is_fatal(int error) {
  switch (error) {
  case SPEEDY_ERR_NOMEM:
  case SPEEDY_ERR_CALLBACK_FAILURE:
  case SPEEDY_ERR_PROTOCOL:
  case SPEEDY_ERR_COMPRESSION:
  case SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE:
  case SPEEDY_ERR_FRAME_TOO_LARGE:
  case SPEEDY_ERR_UNSUPPORTED_VERSION:
  case SPEEDY_ERR_FLOW_CONTROL:
  case SPEEDY_ERR_FLOOD:
  case SPEEDY_ERR_SETTINGS_TIMEOUT:
    return 1;
  default:
    return 0;
  }
}

const char *speedy_protocol_name(speedy_protocol protocol) {
  switch (protocol) {
  case SPEEDY_PROTOCOL_H2:
    return "h2";
  case SPEEDY_PROTOCOL_SPDY2:
    return "spdy/2";
  case SPEEDY_PROTOCOL_SPDY3:
    return "spdy/3";
  case SPEEDY_PROTOCOL_SPDY3_1:
    return "spdy/3.1";
  default:
    return NULL;
  }
}

int speedy_protocol_from_name(const char *name, size_t len, speedy_protocol *out) {
  static const speedy_protocol all[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3,
                                        SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_PROTOCOL_H2};
  if (name == NULL || out == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
    const char *id = speedy_protocol_name(all[i]);
    if (strlen(id) == len && memcmp(id, name, len) == 0) {
      *out = all[i];
      return 0;
    }
  }
  return SPEEDY_ERR_INVALID_ARGUMENT;
}

const char *speedy_rst_status_name(uint32_t status) {
  static const char *const names[] = {"NONE",
                                      "PROTOCOL_ERROR",
                                      "INVALID_STREAM",
                                      "REFUSED_STREAM",
                                      "UNSUPPORTED_VERSION",
                                      "CANCEL",
                                      "INTERNAL_ERROR",
                                      "FLOW_CONTROL_ERROR",
                                      "STREAM_IN_USE",
                                      "STREAM_ALREADY_CLOSED",
                                      "INVALID_CREDENTIALS",
                                      "FRAME_TOO_LARGE",
                                      "SETTINGS_TIMEOUT",
                                      "COMPRESSION_ERROR",
                                      "CONNECT_ERROR",
                                      "ENHANCE_YOUR_CALM",
                                      "INADEQUATE_SECURITY",
                                      "HTTP_1_1_REQUIRED"};
  return status < sizeof(names) / sizeof(names[0]) ? names[status] : "UNKNOWN";
}

const char *speedy_spdy_frame_type_name(int type) {
  static const char *const names[] = {"DATA",     "SYN_STREAM",    "SYN_REPLY", "RST_STREAM",
                                      "SETTINGS", "NOOP",          "PING",      "GOAWAY",
                                      "HEADERS",  "WINDOW_UPDATE", "CREDENTIAL"};
  return type >= 0 && (size_t)type < sizeof(names) / sizeof(names[0]) ? names[type] : "UNKNOWN";
}

int speedy_detect_spdy_version(const uint8_t *bytes, size_t len) {
  if (bytes == NULL && len > 0) return -1;
  if (len >= 1 && bytes[0] != 0x80) return -1; /* control bit + version high byte 0 */
  if (len < 4) return 0;
  uint16_t version = spdy_get_u16(bytes) & 0x7fff;
  uint16_t type = spdy_get_u16(bytes + 2);
  if (version != 2 && version != 3) return -1;
  /* A client opens with SYN_STREAM, SETTINGS, PING or (rarely) WINDOW_UPDATE. */
  if (type < SPEEDY_SPDY_FRAME_SYN_STREAM || type > SPEEDY_SPDY_FRAME_CREDENTIAL) return -1;
  return version;
}

const char *speedy_protocol_frame_type_name(speedy_protocol protocol, int type) {
  if (protocol == SPEEDY_PROTOCOL_H2)
    return type >= 0 ? speedy_h2_frame_type_name((unsigned)type) : "UNKNOWN";
  return speedy_spdy_frame_type_name(type);
}

int speedy_detect_h2_preface(const uint8_t *bytes, size_t len) {
  if (len == 0) return 0;
  if (bytes == NULL) return -1;
  size_t n = len < SPEEDY_H2_PREFACE_LEN ? len : SPEEDY_H2_PREFACE_LEN;
  if (memcmp(bytes, SPEEDY_H2_PREFACE, n) != 0) return -1;
  return n == SPEEDY_H2_PREFACE_LEN ? 1 : 0;
}

const char *speedy_status_reason(int status) {
  static const struct {
    int status;
    const char *reason;
  } reasons[] = {
      {100, "Continue"},
      {101, "Switching Protocols"},
      {103, "Early Hints"},
      {200, "OK"},
      {201, "Created"},
      {202, "Accepted"},
      {203, "Non-Authoritative Information"},
      {204, "No Content"},
      {205, "Reset Content"},
      {206, "Partial Content"},
      {300, "Multiple Choices"},
      {301, "Moved Permanently"},
      {302, "Found"},
      {303, "See Other"},
      {304, "Not Modified"},
      {307, "Temporary Redirect"},
      {308, "Permanent Redirect"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {406, "Not Acceptable"},
      {407, "Proxy Authentication Required"},
      {408, "Request Timeout"},
      {409, "Conflict"},
      {410, "Gone"},
      {411, "Length Required"},
      {412, "Precondition Failed"},
      {413, "Content Too Large"},
      {414, "URI Too Long"},
      {415, "Unsupported Media Type"},
      {416, "Range Not Satisfiable"},
      {417, "Expectation Failed"},
      {421, "Misdirected Request"},
      {422, "Unprocessable Content"},
      {426, "Upgrade Required"},
      {428, "Precondition Required"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"},
      {505, "HTTP Version Not Supported"},
  };
  for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
    if (reasons[i].status == status) return reasons[i].reason;
  return NULL;
}
