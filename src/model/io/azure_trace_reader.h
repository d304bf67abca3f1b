// Reader for Azure's public LLM inference traces (Patel et al., "Splitwise", ISCA 2024;
// github.com/Azure/AzurePublicDataset, AzureLLMInferenceTrace_{code,conv}.csv), as published.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/request_stream.h"
#include "util/status.h"

namespace hetsched::model::io {

// Largest token count a row may give; far above any model's context, small enough for int32.
inline constexpr int32_t kMaxAzureTokens = 10'000'000;

// Parses a trace: the header line "TIMESTAMP,ContextTokens,GeneratedTokens", then one request
// per line, e.g. "2023-11-16 18:15:46.6805900,374,44". TIMESTAMP is "YYYY-MM-DD HH:MM:SS" with
// an optional fraction of up to 9 digits (the files have 7); it is read as a calendar date, so
// rows may cross midnight and month ends. Rows must be in time order (equal times are fine).
// ContextTokens becomes input_tokens, GeneratedTokens output_tokens; both are whole numbers from
// 0 to kMaxAzureTokens. Arrivals are seconds after the first row's, so the first is 0. Blank
// lines are skipped; Windows line ends (the published files have them) and a UTF-8 byte order
// mark are accepted. Errors are InvalidArgument "file:line:column: FIELD: problem (expected
// ...)", the column being that of the field's first character.
util::Result<std::vector<InferenceRequest>> ParseAzureTrace(std::string_view text,
                                                            const std::string& file_name);
util::Result<std::vector<InferenceRequest>> LoadAzureTrace(const std::string& path);

}  // namespace hetsched::model::io
