// Transactional batch: all or nothing within one logical partition. The base server runs the
// operations one by one and keeps the earlier ones when a later one fails.
"use strict";

const ops = require("@vercel/cosmosdb-server/lib/handler/_document-operations");
const { parsePartitionKey } = require("@vercel/cosmosdb-server/lib/utils/get-partition-from-header");
const { readBody, send } = require("./http");
const { purgeExpired } = require("./patches");

const MAX_OPERATIONS = 100;

function runOne(collection, input, partition) {
  const kind = String(input.operationType || "").toLowerCase();
  const fn = ops[`${kind}Operation`];
  if (!fn) return { statusCode: 400, body: { message: `unsupported operation ${kind}` } };
  const body = input.resourceBody;
  if (body && collection.documents._getPartition(body) !== partition) {
    // Cosmos refuses a document whose partition key is not the batch's.
    return { statusCode: 400, body: { message: "partition key of the document differs from the batch" } };
  }
  try {
    return fn(collection, input);
  } catch (err) {
    return { statusCode: err.conflict ? 409 : 400, body: { message: err.message } };
  }
}

async function batch(req, res, collection) {
  const input = JSON.parse(await readBody(req));
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_OPERATIONS) {
    return send(res, 400, { code: "BadRequest", message: `a batch holds 1 to ${MAX_OPERATIONS} operations` });
  }
  const items = collection.documents;
  purgeExpired(items);
  const pkHeader = req.headers["x-ms-documentdb-partitionkey"];
  const partition = parsePartitionKey(pkHeader);
  const saved = { data: new Map(items._data), index: new Map(items._index), rid: items._ridCount };
  const results = [];
  let failedAt = -1;
  for (let i = 0; i < input.length; i += 1) {
    const op = { ...input[i], partitionKey: input[i].partitionKey || pkHeader };
    const result = runOne(collection, op, partition);
    if (result.statusCode >= 400) {
      failedAt = i;
      results.push({ statusCode: result.statusCode, requestCharge: 0 });
      break;
    }
    results.push({
      statusCode: result.statusCode,
      requestCharge: 1,
      eTag: result.body ? result.body._etag : undefined,
      resourceBody: result.body,
    });
  }
  if (failedAt < 0) return send(res, 200, results);
  // Put the container back exactly as it was (etags included); the maps hold immutable items.
  items._data = saved.data;
  items._index = saved.index;
  items._ridCount = saved.rid;
  items._nextExpiry = undefined;
  const out = input.map((_, i) => (i === failedAt ? results[failedAt] : { statusCode: 424, requestCharge: 0 }));
  return send(res, 207, out);
}

module.exports = { batch };
