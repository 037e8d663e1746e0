// Single-document writes and reads with the checks Cosmos makes and the base server skips:
// 404 for a missing container or item (not 500), 413 over 2 MB, 400 when the body's partition
// key differs from the request's.
"use strict";

const ops = require("@vercel/cosmosdb-server/lib/handler/_document-operations");
const { readBody, send, requestPartition } = require("./http");

const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
const NOT_FOUND = { code: "NotFound", message: "Entity with the specified id does not exist in the system." };

function reply(res, result) {
  const headers = result.body && result.body._etag ? { etag: result.body._etag } : {};
  return send(res, result.statusCode, result.body || {}, headers);
}

async function write(req, res, collection, kind, docId) {
  const raw = await readBody(req);
  if (Buffer.byteLength(raw, "utf8") > MAX_DOCUMENT_BYTES) {
    return send(res, 413, { code: "RequestEntityTooLarge", message: "Request size is too large" });
  }
  const body = JSON.parse(raw);
  const partition = requestPartition(req);
  if (partition !== undefined && collection.documents._getPartition(body) !== partition) {
    return send(res, 400, { code: "BadRequest", message: "PartitionKey extracted from document doesn't match the one specified in the header" });
  }
  if (docId !== undefined && body.id !== docId) {
    return send(res, 400, { code: "BadRequest", message: "the id in the body differs from the id in the address" });
  }
  const input = { partitionKey: req.headers["x-ms-documentdb-partitionkey"], ifMatch: req.headers["if-match"], resourceBody: body };
  return reply(res, ops[`${kind}Operation`](collection, input));
}

function read(req, res, collection, docId) {
  const partition = requestPartition(req);
  const doc = collection.document(docId, partition === undefined ? docId : partition).read();
  if (!doc) return send(res, 404, NOT_FOUND);
  return send(res, 200, doc, { etag: doc._etag });
}

module.exports = { write, read, NOT_FOUND };
