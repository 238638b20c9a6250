"""Builds the recorded answers of reserves_test.go (see ../README.md).

The pools' reserves are made up, of the size PulseChain's pools have; the
router's getAmountsOut and getAmountsIn answers are computed here from them
with UniswapV2Library's integer arithmetic and PulseX's 9971/10000 fee, an
implementation of its own, independent of the Go code under test.
Run: python3 gen.py (writes *.json next to it).
"""
import json, os

USDCH = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D"
WPLS = "0xA1077a294dDE1B09bB078844df40758a5D0f9a27"
DAI = "0xefD766cCb38EaF1dfd701853BFCe31359239F305"
HEX = "0x2b591e99afE9f32eAA6214f7B7629768c40Eeb39"
FACTORY = "0x29eA7545DEf87022BAdc76323F373EA1e707C523"
ROUTER = "0x165C3410fC91EF562C50559f7d2289fEbed552d9"
BLOCK = 21_654_321
# Pair contracts: made-up addresses, one per pool.
PAIRS = {
    (WPLS, USDCH): "0x6753560538ECa67617A9Ce605178F788bE7E524E",
    (DAI, USDCH): "0x1D2be6eFf95Ac5C380a8D6a6143b6a97dd9D8712",
}
# Reserves by token: 4,512,345.678901 USDCh against 150,123,456,789.12...
# WPLS; 812,345.123456 USDCh against 812,001.5 DAI.
RES = {
    (WPLS, USDCH): {WPLS: 150123456789123456789012345678, USDCH: 4512345678901},
    (DAI, USDCH): {DAI: 812001500000000000000000, USDCH: 812345123456},
}

def word(v): return format(v, "064x")
def addr(a): return "0" * 24 + a[2:].lower()
def sel(s): return {"getPair": "e6a43905", "token0": "0dfe1681", "getReserves": "0902f1ac",
                    "getAmountsOut": "d06ca61f", "getAmountsIn": "1f00ca74"}[s]
def amounts_arg(amount, path):
    return word(amount) + word(0x40) + word(len(path)) + "".join(addr(a) for a in path)
def amounts_ret(amounts):
    return "0x" + word(0x20) + word(len(amounts)) + "".join(word(a) for a in amounts)
def token0(a, b): return a if int(a, 16) < int(b, 16) else b
def pool(a, b):
    k = (a, b) if (a, b) in RES else (b, a)
    return RES.get(k)

def out_hop(a, rin, rout):
    if a <= 0 or rin <= 0 or rout <= 0: raise ValueError("PulseXLibrary: INSUFFICIENT_INPUT_AMOUNT")
    f = a * 9971
    return f * rout // (rin * 10000 + f)
def in_hop(o, rin, rout):
    if o <= 0 or rin <= 0 or rout <= 0: raise ValueError("PulseXLibrary: INSUFFICIENT_OUTPUT_AMOUNT")
    if o >= rout: raise ValueError("PulseXLibrary: INSUFFICIENT_LIQUIDITY")
    return rin * o * 10000 // ((rout - o) * 9971) + 1
def get_amounts_out(a, path):
    out = [a]
    for x, y in zip(path, path[1:]):
        p = pool(x, y)
        if p is None: raise ValueError("PulseXLibrary: no pair")
        out.append(out_hop(out[-1], p[x], p[y]))
    return out
def get_amounts_in(o, path):
    out = [o]
    for x, y in reversed(list(zip(path, path[1:]))):
        p = pool(x, y)
        if p is None: raise ValueError("PulseXLibrary: no pair")
        out.insert(0, in_hop(out[0], p[x], p[y]))
    return out

here = os.path.dirname(os.path.abspath(__file__))
def write(name, rec):
    with open(os.path.join(here, name + ".json"), "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")

def call(to, data, source, result=None, revert=None):
    rec = {"chainId": 369, "source": source, "call": {"to": to, "input": "0x" + data}}
    rec["response"] = {"result": result} if revert is None else {"error": {"code": 3, "message": "execution reverted: " + revert}}
    return rec

write("block_number", {"chainId": 369, "method": "eth_blockNumber",
      "source": "eth_blockNumber: the head the snapshot is read at", "response": {"result": hex(BLOCK)}})
for (a, b), pair in PAIRS.items():
    s0 = token0(a, b)
    lo, hi = sorted([a, b], key=lambda x: int(x, 16))
    name = {WPLS: "wpls", DAI: "dai"}[a]
    write("get_pair_" + name, call(FACTORY, sel("getPair") + addr(lo) + addr(hi),
          "getPair(address,address) on the PulseX v2 factory, the tokens in the factory's order; the pair's address (made up)",
          "0x" + addr(pair)))
    write("token0_" + name, call(pair, sel("token0"), "token0() of the pair: the lower address", "0x" + addr(s0)))
    r = RES[(a, b)]
    write("get_reserves_" + name, call(pair, sel("getReserves"),
          "getReserves() of the pair at the head: reserve0 (token0's), reserve1, blockTimestampLast (made-up reserves of PulseChain's size)",
          "0x" + word(r[s0]) + word(r[b if s0 == a else a]) + word(1_764_000_000)))
lo, hi = sorted([HEX, USDCH], key=lambda x: int(x, 16))
write("get_pair_hex", call(FACTORY, sel("getPair") + addr(lo) + addr(hi),
      "getPair(address,address) for HEX/USDCh: no such pair, the zero address", "0x" + word(0)))

cases = [
    ("out", 1_000_000, [USDCH, WPLS], "1 USDCh to WPLS"),
    ("out", 50_000_000_000, [USDCH, WPLS], "50,000 USDCh to WPLS"),
    ("out", 10**24, [WPLS, USDCH], "1,000,000 WPLS to USDCh"),
    ("out", 1000 * 10**18, [DAI, USDCH], "1,000 DAI to USDCh (in this pair USDCh is token0: DAI sorts above it)"),
    ("out", 1_000_000, [USDCH, DAI], "1 USDCh to DAI"),
    ("out", 5 * 10**23, [WPLS, USDCH, DAI], "500,000 WPLS to DAI through USDCh"),
    ("out", 1_000_000, [USDCH, HEX], "1 USDCh to HEX: no pair, the router reverts"),
    ("in", 10**22, [USDCH, WPLS], "USDCh for 10,000 WPLS"),
    ("in", 10**24, [DAI, USDCH, WPLS], "DAI for 1,000,000 WPLS through USDCh"),
    ("in", 900_000 * 10**18, [USDCH, DAI], "USDCh for 900,000 DAI, more than the pool holds: the router reverts"),
]
for i, (kind, amount, path, what) in enumerate(cases):
    method = "getAmountsOut" if kind == "out" else "getAmountsIn"
    data = sel(method) + amounts_arg(amount, path)
    src = method + "(uint256,address[]) on the PulseX v2 router: " + what + "; computed from the recorded reserves with UniswapV2Library's arithmetic and the 0.29% fee"
    try:
        r = (get_amounts_out if kind == "out" else get_amounts_in)(amount, path)
        rec = call(ROUTER, data, src, amounts_ret(r))
    except ValueError as e:
        rec = call(ROUTER, data, src, revert=str(e))
    write("router_%02d_%s" % (i, method), rec)
