// kreg: the command-line tool.
#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"kreg: a runtime registry of CUDA kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kreg::version()));

  kreg::cli::SelfCheckOptions check;
  CLI::App* selfcheck = app.add_subcommand(
      "selfcheck",
      "Compile and prewarm every built-in kernel, then run each on the GPU if there is one");
  selfcheck->add_option("--arch", check.arch, "Compile target, e.g. sm_90 (default: the GPU's)");
  selfcheck->add_option("-j,--jobs", check.jobs, "Prewarm threads (default: one per core)");
  selfcheck->add_flag("--json", check.json, "Print JSON instead of tables");

  CLI::App* list = app.add_subcommand("list", "List sources, their entries and constants");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*selfcheck) return kreg::cli::selfcheck(check);
    if (*list) {
      kreg::Registry reg(kreg::RegistryOptions{.warm_compiler = false});
      for (const std::string& name : reg.source_names()) {
        const kreg::SourceInfo info = reg.source_info(name);
        std::cout << name << "\n";
        for (const auto& entry : info.entries) std::cout << "  entry " << entry << "\n";
        for (const auto& c : info.constants) {
          std::cout << "  constant " << c.index << " " << (c.is_bool ? "bool " : "int ") << c.name
                    << (c.has_default ? " (has default)" : " (required)") << "\n";
        }
        for (const auto& s : info.specializations) {
          std::cout << "  specialization " << kreg::constants_key(s) << "\n";
        }
      }
      return 0;
    }
  } catch (const kreg::Error& e) {
    std::cerr << "kreg: " << kreg::to_string(e.code()) << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
