// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// AmountsOracle stands in for the PulseX v2 router in chainreader tests:
// getAmountsOut returns one amount per path token, the first being amountIn
// and each next one the previous times 997/1000 (rounded down), as a chain
// of fee-taking hops would. Any other selector reverts. AmountsOracle.json
// holds hand-assembled EVM bytecode equivalent to this source (see its
// "assembly" listing); no compiler is needed to use it.
contract AmountsOracle {
    function getAmountsOut(uint256 amountIn, address[] calldata path) external pure returns (uint256[] memory amounts) {
        amounts = new uint256[](path.length);
        uint256 amount = amountIn;
        for (uint256 i = 0; i < path.length; i++) {
            amounts[i] = amount;
            amount = amount * 997 / 1000;
        }
    }
}
