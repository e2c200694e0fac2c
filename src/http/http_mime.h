/* http_mime.h — Content-Type by file name extension, and which types gzip well. */
#ifndef SPEEDY_HTTP_MIME_H
#define SPEEDY_HTTP_MIME_H

/* The Content-Type for a file name (by its last extension, case-insensitive):
 * html/htm, css, js/mjs, json, png, jpg/jpeg, gif, svg, ico, woff, woff2, txt, xml, pdf,
 * wasm, mp4, webp; text types carry "; charset=utf-8". Anything else is
 * "application/octet-stream". Never NULL; the string is static. */
const char *http_mime_type(const char *name);

/* 1 when a response of this Content-Type is worth gzipping: text/ anything, JavaScript, JSON,
 * SVG and XML. */
int http_mime_compressible(const char *type);

#endif
