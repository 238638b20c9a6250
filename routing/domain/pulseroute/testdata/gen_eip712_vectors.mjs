// gen_eip712_vectors.mjs writes eip712_vectors.json beside it: RegisterDeposit
// messages signed by ethers v6, an EIP-712 implementation independent of
// go-ethereum's, which eip712_vectors_test.go holds the Go code to.
//
// It is not part of `make test` (nothing in the build needs Node). To rerun
// it, from the repository root:
//
//	npm install --prefix /tmp/ethers6 ethers@6
//	ETHERS_PREFIX=/tmp/ethers6 node routing/domain/pulseroute/testdata/gen_eip712_vectors.mjs
//
// Without ETHERS_PREFIX the script imports "ethers" as Node resolves it.
// Every input is derived from fixed seeds, and ethers signs with RFC 6979
// nonces, so a rerun with any ethers 6 release writes the same file but for
// the "generator" line.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ethers = process.env.ETHERS_PREFIX
  ? createRequire(join(process.env.ETHERS_PREFIX, "resolve.js"))("ethers")
  : await import("ethers");

const types = {
  RegisterDeposit: [
    { name: "txHash", type: "bytes32" },
    { name: "toAddress", type: "address" },
    { name: "outputToken", type: "address" },
    { name: "destinationDomain", type: "uint32" },
  ],
};

// seeded is keccak256 of a label, the source of every key, hash and address.
const seeded = (label) => ethers.keccak256(ethers.toUtf8Bytes("swapgate/eip712-vectors/" + label));
const seededAddress = (label) => ethers.getAddress(ethers.dataSlice(seeded(label), 12));

const WPLS = "0xA1077a294dDE1B09bB078844df40758a5D0f9a27";
const USDCH = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D";

// One vector per source chain of the warp route, plus a second on chain 1
// with the largest uint32 destination domain, which the signature must
// cover like any other (the service refuses it, the signature scheme not).
const cases = [
  { chainId: 1, outputToken: WPLS, destinationDomain: 369 },
  { chainId: 42161, outputToken: USDCH, destinationDomain: 369 },
  { chainId: 8453, outputToken: seededAddress("token/8453"), destinationDomain: 369 },
  { chainId: 10, outputToken: WPLS, destinationDomain: 369 },
  { chainId: 137, outputToken: USDCH, destinationDomain: 369 },
  { chainId: 43114, outputToken: seededAddress("token/43114"), destinationDomain: 369 },
  { chainId: 130, outputToken: WPLS, destinationDomain: 369 },
  { chainId: 1, outputToken: USDCH, destinationDomain: 4294967295 },
];

const vectors = [];
for (const [i, c] of cases.entries()) {
  const wallet = new ethers.Wallet(seeded("key/" + i));
  const domain = { name: "ServiceInboundReceiver", version: "1", chainId: c.chainId };
  const message = {
    txHash: seeded("tx/" + i),
    toAddress: seededAddress("to/" + i),
    outputToken: c.outputToken,
    destinationDomain: c.destinationDomain,
  };
  const signature = await wallet.signTypedData(domain, types, message);
  if (ethers.verifyTypedData(domain, types, message, signature) !== wallet.address) {
    throw new Error("vector " + i + ": ethers does not recover its own signer");
  }
  vectors.push({
    name: "chain " + c.chainId + " #" + i,
    privateKey: wallet.privateKey,
    address: wallet.address,
    chainId: c.chainId,
    message,
    domainSeparator: ethers.TypedDataEncoder.hashDomain(domain),
    structHash: ethers.TypedDataEncoder.from(types).hash(message),
    digest: ethers.TypedDataEncoder.hash(domain, types, message),
    signature,
  });
}

const out = fileURLToPath(new URL("./eip712_vectors.json", import.meta.url));
const doc = { generator: "ethers " + ethers.version + " (gen_eip712_vectors.mjs)", vectors };
writeFileSync(out, JSON.stringify(doc, null, 2) + "\n");
console.log("wrote " + vectors.length + " vectors to " + out);
