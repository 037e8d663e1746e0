// Queries scoped the way Cosmos scopes them: to the partition key sent with the request, or to
// the partition-key range (and EPK bounds) of a fan-out request. The base server runs every
// query over the whole container and restarts from the top on a garbled continuation.
"use strict";

const { readBody, send, requestPartition, requestEpkRange, inRange } = require("./http");
const { liveDocuments, epkOfDoc } = require("./patches");

function parseContinuation(raw) {
  if (!raw) return { ok: true, value: null };
  try {
    const value = JSON.parse(raw);
    if (value && typeof value.token === "string" && value.token.startsWith("+RID:")) return { ok: true, value };
  } catch (err) {
    // fall through: a token we did not issue
  }
  return { ok: false };
}

async function query(req, res, collection) {
  const body = JSON.parse(await readBody(req));
  if (!body.query) return send(res, 400, { code: "BadRequest", message: "missing query" });
  const continuation = parseContinuation(req.headers["x-ms-continuation"]);
  if (!continuation.ok) return send(res, 400, { code: "BadRequest", message: "Invalid Continuation Token" });
  const range = requestEpkRange(req, collection);
  if (range === null) return send(res, 410, { code: "Gone" }, { "x-ms-substatus": "1002" });
  const items = collection.documents;
  const partition = requestPartition(req);
  const docs = liveDocuments(items)
    .filter(doc => partition === undefined || items._getPartition(doc) === partition)
    .filter(doc => inRange(epkOfDoc(items, doc), range));
  const parent = collection.read();
  const maxItemCount = parseInt(req.headers["x-ms-max-item-count"] || "-1", 10);
  let result;
  try {
    result = items._getQuery(body.query).exec(docs, {
      parameters: body.parameters,
      udf: items._userDefinedFunctions(),
      maxItemCount,
      continuation: continuation.value,
      compositeIndexes: (parent.indexingPolicy && parent.indexingPolicy.compositeIndexes) || [],
    });
  } catch (err) {
    return send(res, 400, { code: "BadRequest", message: err.message });
  }
  const headers = { "x-ms-item-count": String(result.result.length) };
  if (result.continuation) headers["x-ms-continuation"] = JSON.stringify(result.continuation);
  return send(res, 200, { _rid: parent._rid, Documents: result.result, _count: result.result.length }, headers);
}

module.exports = { query };
