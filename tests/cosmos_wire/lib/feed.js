// Change feed in latest-version mode (A-IM: Incremental feed). The continuation is the etag of
// the last page: the highest _lsn returned, so a document changed twice between reads shows up
// once, at its latest version, and deletes never appear.
"use strict";

const { send, requestPartition, requestEpkRange, inRange } = require("./http");
const { state, liveDocuments, epkOfDoc } = require("./patches");

function startAfter(req) {
  const ifNoneMatch = req.headers["if-none-match"];
  if (ifNoneMatch === "*") return state.lsn; // start "now"
  if (!ifNoneMatch) return 0; // from the beginning
  return parseInt(String(ifNoneMatch).replace(/"/g, ""), 10) || 0;
}

function changeFeed(req, res, collection) {
  const items = collection.documents;
  const range = requestEpkRange(req, collection);
  if (range === null) {
    // The SDK refreshes its routing map and retries on 410/1002 (partition key range gone).
    return send(res, 410, { code: "Gone", message: "partition key range gone" }, { "x-ms-substatus": "1002" });
  }
  const partition = requestPartition(req);
  const after = startAfter(req);
  const since = req.headers["if-modified-since"] ? Date.parse(req.headers["if-modified-since"]) / 1000 : -Infinity;
  const max = parseInt(req.headers["x-ms-max-item-count"] || "100", 10);
  let docs = liveDocuments(items)
    .filter(doc => doc._lsn > after && doc._ts >= Math.floor(since))
    .filter(doc => partition === undefined || items._getPartition(doc) === partition)
    .filter(doc => inRange(epkOfDoc(items, doc), range))
    .sort((a, b) => a._lsn - b._lsn);
  if (max > 0) docs = docs.slice(0, max);
  if (docs.length === 0) {
    return send(res, 304, undefined, { etag: `"${Math.max(after, 0)}"`, "x-ms-item-count": "0" });
  }
  const last = docs[docs.length - 1]._lsn;
  return send(res, 200, { _rid: collection.read()._rid, Documents: docs, _count: docs.length },
    { etag: `"${last}"`, "x-ms-item-count": String(docs.length) });
}

module.exports = { changeFeed };
