/*
 * gl_sha256.h: SHA-256 (FIPS 180-4), to check the files an export sealed in manifest.json.
 */
#ifndef GRAPHLAB_SHA256_H
#define GRAPHLAB_SHA256_H

#include <stddef.h>

/* The digest of `size` bytes as 64 lowercase hex digits and a NUL in `hex`. */
void gl_sha256_hex(const void *data, size_t size, char hex[65]);

#endif /* GRAPHLAB_SHA256_H */
