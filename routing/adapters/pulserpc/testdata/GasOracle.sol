// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// GasOracle stands in for a Hyperlane TokenRouter in chainreader tests: it
// answers quoteGasPayment with destinationDomain * 1e12 wei, so a test can
// tell that the domain argument reached the contract. Any other selector
// reverts. GasOracle.json holds hand-assembled EVM bytecode equivalent to
// this source (see its "assembly" listing); no compiler is needed to use it.
contract GasOracle {
    function quoteGasPayment(uint32 destinationDomain) external pure returns (uint256) {
        return uint256(destinationDomain) * 1e12;
    }
}
