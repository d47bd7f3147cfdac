#include "compiler/ir/module.h"

namespace relay::ir {

void Module::AddFunction(GlobalVar name, Function function) {
  RELAY_CHECK(name && function, "module function with a null part");
  auto [position, inserted] = function_index_.emplace(name->name, functions_.size());
  if (inserted) {
    functions_.push_back({std::move(name), std::move(function)});
  } else {
    functions_[position->second] = {std::move(name), std::move(function)};
  }
}

void Module::AddTypeDefinition(TypeDefinition definition) {
  RELAY_CHECK(definition.name, "type definition without a name");
  if (const TypeDefinition* existing = FindTypeDefinition(definition.name->name)) {
    for (const Constructor& constructor : existing->constructors)
      constructors_.erase(constructor->name);
  }
  for (const Constructor& constructor : definition.constructors) {
    constructors_[constructor->name] = constructor;
  }
  auto [position, inserted] = type_index_.emplace(definition.name->name, types_.size());
  if (inserted) {
    types_.push_back(std::move(definition));
  } else {
    types_[position->second] = std::move(definition);
  }
}

const GlobalFunction* Module::FindFunction(std::string_view name) const {
  auto found = function_index_.find(std::string(name));
  return found == function_index_.end() ? nullptr : &functions_[found->second];
}

const TypeDefinition* Module::FindTypeDefinition(std::string_view name) const {
  auto found = type_index_.find(std::string(name));
  return found == type_index_.end() ? nullptr : &types_[found->second];
}

Constructor Module::FindConstructor(std::string_view name) const {
  auto found = constructors_.find(std::string(name));
  return found == constructors_.end() ? Constructor() : found->second;
}

}  // namespace relay::ir
