// Effective partition key (EPK) of a partition-key value, hash V2 as the Cosmos SDKs compute
// it: MurmurHash3 x64 128 over the binary-encoded value, bytes reversed, top two bits cleared.
// The server needs the same hash as the client so feed ranges and EPK sub-ranges the SDK sends
// select exactly the documents real Cosmos DB would put there.
"use strict";

const MASK = (1n << 64n) - 1n;
const C1 = 0x87c37b91114253d5n;
const C2 = 0x4cf5ad432745937fn;

const rotl = (v, s) => ((v << BigInt(s)) | (v >> BigInt(64 - s))) & MASK;
const mul = (a, b) => (a * b) & MASK;
const add = (a, b) => (a + b) & MASK;

function fmix(k) {
  k ^= k >> 33n;
  k = mul(k, 0xff51afd7ed558ccdn);
  k ^= k >> 33n;
  k = mul(k, 0xc4ceb9fe1a85ec53n);
  return k ^ (k >> 33n);
}

function readLE(buf, at, n) {
  let v = 0n;
  for (let i = n - 1; i >= 0; i -= 1) v = (v << 8n) | BigInt(buf[at + i]);
  return v;
}

function murmur3x64_128(buf) {
  let h1 = 0n;
  let h2 = 0n;
  const blocks = buf.length - (buf.length % 16);
  for (let i = 0; i < blocks; i += 16) {
    const k1 = mul(rotl(mul(readLE(buf, i, 8), C1), 31), C2);
    h1 = add(mul(add(rotl(h1 ^ k1, 27), h2), 5n), 0x52dce729n);
    const k2 = mul(rotl(mul(readLE(buf, i + 8, 8), C2), 33), C1);
    h2 = add(mul(add(rotl(h2 ^ k2, 31), h1), 5n), 0x38495ab5n);
  }
  const tail = buf.length - blocks;
  if (tail > 8) h2 ^= mul(rotl(mul(readLE(buf, blocks + 8, tail - 8), C2), 33), C1);
  if (tail > 0) h1 ^= mul(rotl(mul(readLE(buf, blocks, Math.min(tail, 8)), C1), 31), C2);
  const len = BigInt(buf.length);
  h1 ^= len;
  h2 ^= len;
  h1 = add(h1, h2);
  h2 = add(h2, h1);
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = add(h1, h2);
  h2 = add(h2, h1);
  return [h1, h2];
}

// Binary encoding of one partition-key component (type marker + payload), V2 flavour.
function encode(value) {
  if (value === true) return Buffer.from([0x03]);
  if (value === false) return Buffer.from([0x02]);
  if (value === null) return Buffer.from([0x01]);
  if (value === undefined || (typeof value === "object" && Object.keys(value).length === 0)) {
    return Buffer.from([0x00]);
  }
  if (typeof value === "number") {
    const b = Buffer.alloc(9);
    b[0] = 0x05;
    b.writeDoubleLE(value, 1);
    return b;
  }
  return Buffer.concat([Buffer.from([0x08]), Buffer.from(String(value), "utf8"), Buffer.from([0xff])]);
}

const cache = new Map();

function epkOf(value) {
  const key = JSON.stringify(value === undefined ? {} : value);
  let epk = cache.get(key);
  if (epk === undefined) {
    const [low, high] = murmur3x64_128(encode(value));
    const bytes = Buffer.alloc(16);
    bytes.writeBigUInt64LE(low, 0);
    bytes.writeBigUInt64LE(high, 8);
    bytes.reverse();
    bytes[0] &= 0x3f;
    epk = bytes.toString("hex").toUpperCase();
    if (cache.size > 100000) cache.clear();
    cache.set(key, epk);
  }
  return epk;
}

// Range boundaries splitting the V2 hash space (first byte 00..3F) into n physical ranges.
function rangeBounds(n) {
  const bounds = [""];
  for (let i = 1; i < n; i += 1) {
    bounds.push(Math.floor((0x40 * i) / n).toString(16).toUpperCase().padStart(2, "0"));
  }
  bounds.push("FF");
  return bounds;
}

module.exports = { epkOf, rangeBounds, murmur3x64_128 };
