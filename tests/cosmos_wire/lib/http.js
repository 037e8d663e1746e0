// Small request/response helpers shared by the handlers.
"use strict";

const crypto = require("crypto");
const { parsePartitionKey } = require("@vercel/cosmosdb-server/lib/utils/get-partition-from-header");

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", chunk => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res, status, body, headers = {}) {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("x-ms-request-charge", "1");
  res.setHeader("x-ms-activity-id", crypto.randomUUID());
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(body === undefined ? "" : JSON.stringify(body));
}

// The partition-key value a request is scoped to, or undefined when it names none.
function requestPartition(req) {
  const header = req.headers["x-ms-documentdb-partitionkey"];
  if (!header || header === "[{}]") return undefined;
  return parsePartitionKey(header);
}

// The EPK interval a request is scoped to: a physical range by id, narrowed by EPK headers.
function requestEpkRange(req, collection) {
  let lo = "";
  let hi = "FF";
  const rangeId = req.headers["x-ms-documentdb-partitionkeyrangeid"];
  if (rangeId !== undefined) {
    const id = String(rangeId).split(",").pop();
    const range = collection.partitionKeyRanges._item("/id", id, id).read();
    if (!range) return null;
    lo = range.minInclusive;
    hi = range.maxExclusive;
  }
  if (req.headers["x-ms-start-epk"] !== undefined) lo = req.headers["x-ms-start-epk"];
  if (req.headers["x-ms-end-epk"] !== undefined) hi = req.headers["x-ms-end-epk"];
  return { lo, hi };
}

const inRange = (epk, range) => epk >= range.lo && epk < range.hi;

module.exports = { readBody, send, requestPartition, requestEpkRange, inRange };
