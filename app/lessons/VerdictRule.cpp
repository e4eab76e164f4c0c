#include "app/lessons/VerdictRule.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "app/lessons/LessonError.h"

namespace allocscope::app {

// One node of a parsed rule. Every node yields a number or a text; a comparison or a logical
// operator yields 1 or 0.
struct VerdictRule::Node {
    enum class Kind { Number, Text, Metric, Neg, Not, And, Or, Add, Sub, Mul, Div, Compare };
    Kind kind = Kind::Number;
    double number = 0.0;            // Number
    std::string text;               // Text; Metric: the metric name
    std::string run;                // Metric
    std::string op;                 // Compare: "<", "<=", ">", ">=", "==", "!="
    enum class Margin { None, By, Within } margin = Margin::None;
    double marginValue = 0.0;
    bool marginPercent = false;
    bool isText = false;            // the node's type (checked at parse time)
    std::shared_ptr<const Node> a, b;
};

namespace {

using Node = VerdictRule::Node;
using NodePtr = std::shared_ptr<const Node>;

struct Token {
    enum class Kind { Ident, Number, Text, Symbol, End } kind = Kind::End;
    std::string text;
    double number = 0.0;
    std::size_t column = 0;  // 1-based
};

class Parser {
public:
    Parser(const std::string& text, const VerdictRule::Names& names, const std::string& where)
        : text_(text), names_(names), where_(where) {
        tokenize();
    }

    NodePtr parseAll() {
        NodePtr root = parseOr();
        if (peek().kind != Token::Kind::End) fail("unexpected '" + peek().text + "' after a complete rule", peek());
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& what, const Token& at) const {
        throw LessonError("verdict rule: " + what, where_ + ", column " + std::to_string(at.column));
    }
    [[noreturn]] void failAt(const std::string& what, std::size_t column) const {
        throw LessonError("verdict rule: " + what, where_ + ", column " + std::to_string(column));
    }

    void tokenize() {
        std::size_t i = 0;
        while (i < text_.size()) {
            const char c = text_[i];
            if (std::isspace(static_cast<unsigned char>(c))) {
                ++i;
                continue;
            }
            Token t;
            t.column = i + 1;
            if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                std::size_t j = i;
                while (j < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_' || text_[j] == '.')) ++j;
                t.kind = Token::Kind::Ident;
                t.text = text_.substr(i, j - i);
                i = j;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                std::size_t j = i;
                while (j < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[j])) || text_[j] == '.')) ++j;
                t.kind = Token::Kind::Number;
                t.text = text_.substr(i, j - i);
                char* end = nullptr;
                t.number = std::strtod(t.text.c_str(), &end);
                if (end != t.text.c_str() + t.text.size()) failAt("'" + t.text + "' is not a number", t.column);
                i = j;
            } else if (c == '\'') {
                const std::size_t close = text_.find('\'', i + 1);
                if (close == std::string::npos) failAt("a text that starts with ' never ends", t.column);
                t.kind = Token::Kind::Text;
                t.text = text_.substr(i + 1, close - i - 1);
                i = close + 1;
            } else {
                static const char* const kTwo[] = {"<=", ">=", "==", "!="};
                t.kind = Token::Kind::Symbol;
                t.text = std::string(1, c);
                for (const char* two : kTwo) {
                    if (text_.compare(i, 2, two) == 0) t.text = two;
                }
                if (t.text.size() == 1 && std::string("<>()[]+-*/%").find(c) == std::string::npos) {
                    failAt(t.text == "=" ? "'=' is not an operator (write '==')" : "unexpected character '" + t.text + "'", t.column);
                }
                i += t.text.size();
            }
            tokens_.push_back(t);
        }
        Token end;
        end.kind = Token::Kind::End;
        end.text = "end of rule";
        end.column = text_.size() + 1;
        tokens_.push_back(end);
    }

    const Token& peek() const { return tokens_[pos_]; }
    const Token& next() { return tokens_[pos_++]; }
    bool isWord(const char* word) const { return peek().kind == Token::Kind::Ident && peek().text == word; }
    bool isSymbol(const char* symbol) const { return peek().kind == Token::Kind::Symbol && peek().text == symbol; }
    void expectSymbol(const char* symbol, const char* context) {
        if (!isSymbol(symbol)) fail(std::string("expected '") + symbol + "' " + context + ", found '" + peek().text + "'", peek());
        ++pos_;
    }

    static NodePtr binary(Node::Kind kind, NodePtr a, NodePtr b) {
        auto n = std::make_shared<Node>();
        n->kind = kind;
        n->a = std::move(a);
        n->b = std::move(b);
        return n;
    }
    void requireNumber(const NodePtr& n, const Token& at, const char* context) const {
        if (n->isText) fail(std::string("a text cannot be used ") + context, at);
    }

    NodePtr parseOr() {
        NodePtr left = parseAnd();
        while (isWord("or")) {
            const Token at = next();
            NodePtr right = parseAnd();
            requireNumber(left, at, "with 'or'");
            requireNumber(right, at, "with 'or'");
            left = binary(Node::Kind::Or, left, right);
        }
        return left;
    }
    NodePtr parseAnd() {
        NodePtr left = parseNot();
        while (isWord("and")) {
            const Token at = next();
            NodePtr right = parseNot();
            requireNumber(left, at, "with 'and'");
            requireNumber(right, at, "with 'and'");
            left = binary(Node::Kind::And, left, right);
        }
        return left;
    }
    NodePtr parseNot() {
        if (isWord("not")) {
            const Token at = next();
            NodePtr inner = parseNot();
            requireNumber(inner, at, "with 'not'");
            return binary(Node::Kind::Not, inner, nullptr);
        }
        return parseCompare();
    }
    NodePtr parseCompare() {
        NodePtr left = parseSum();
        static const char* const kOps[] = {"<", "<=", ">", ">=", "==", "!="};
        for (const char* op : kOps) {
            if (!isSymbol(op)) continue;
            const Token at = next();
            NodePtr right = parseSum();
            auto n = std::make_shared<Node>();
            n->kind = Node::Kind::Compare;
            n->op = op;
            if (left->isText != right->isText) fail("compares a text with a number", at);
            if (left->isText && n->op != "==" && n->op != "!=") fail("texts can only be compared with == or !=", at);
            if (isWord("by")) {
                const Token by = next();
                if (n->op == "==" || n->op == "!=") fail("'by' needs < <= > or >=", by);
                expectSymbol(">=", "after 'by'");
                n->margin = Node::Margin::By;
                parseQuantity(*n);
            } else if (isWord("within")) {
                const Token within = next();
                if (n->op != "==" && n->op != "!=") fail("'within' needs == or !=", within);
                n->margin = Node::Margin::Within;
                parseQuantity(*n);
            }
            n->a = left;
            n->b = right;
            return n;
        }
        return left;
    }
    void parseQuantity(Node& n) {
        if (peek().kind != Token::Kind::Number) fail("expected a number (with % or a unit), found '" + peek().text + "'", peek());
        n.marginValue = next().number;
        if (isSymbol("%")) {
            ++pos_;
            n.marginPercent = true;
        } else {
            n.marginValue *= unit();
        }
    }
    // An optional byte unit after a number.
    double unit() {
        if (peek().kind != Token::Kind::Ident) return 1.0;
        static const std::pair<const char*, double> kUnits[] = {
            {"B", 1.0}, {"KiB", 1024.0}, {"MiB", 1024.0 * 1024.0}, {"GiB", 1024.0 * 1024.0 * 1024.0}};
        for (const auto& [name, factor] : kUnits) {
            if (peek().text == name) {
                ++pos_;
                return factor;
            }
        }
        return 1.0;
    }
    NodePtr parseSum() {
        NodePtr left = parseProduct();
        while (isSymbol("+") || isSymbol("-")) {
            const Token at = next();
            NodePtr right = parseProduct();
            requireNumber(left, at, "in arithmetic");
            requireNumber(right, at, "in arithmetic");
            left = binary(at.text == "+" ? Node::Kind::Add : Node::Kind::Sub, left, right);
        }
        return left;
    }
    NodePtr parseProduct() {
        NodePtr left = parseUnary();
        while (isSymbol("*") || isSymbol("/")) {
            const Token at = next();
            NodePtr right = parseUnary();
            requireNumber(left, at, "in arithmetic");
            requireNumber(right, at, "in arithmetic");
            left = binary(at.text == "*" ? Node::Kind::Mul : Node::Kind::Div, left, right);
        }
        return left;
    }
    NodePtr parseUnary() {
        if (isSymbol("-")) {
            const Token at = next();
            NodePtr inner = parseUnary();
            requireNumber(inner, at, "with '-'");
            return binary(Node::Kind::Neg, inner, nullptr);
        }
        return parseAtom();
    }
    NodePtr parseAtom() {
        const Token t = peek();
        auto n = std::make_shared<Node>();
        switch (t.kind) {
            case Token::Kind::Number:
                ++pos_;
                n->kind = Node::Kind::Number;
                n->number = t.number * unit();
                return n;
            case Token::Kind::Text:
                ++pos_;
                n->kind = Node::Kind::Text;
                n->text = t.text;
                n->isText = true;
                return n;
            case Token::Kind::Ident: {
                if (t.text == "and" || t.text == "or" || t.text == "by" || t.text == "within") {
                    fail("expected a value before '" + t.text + "'", t);
                }
                ++pos_;
                const char kind = names_.metricKind ? names_.metricKind(t.text) : 0;
                if (kind == 0) fail("unknown metric '" + t.text + "'", t);
                if (!isSymbol("[")) fail("metric '" + t.text + "' needs a run: " + t.text + "[RUN]", peek());
                ++pos_;
                if (peek().kind != Token::Kind::Ident) fail("expected a run id inside [ ], found '" + peek().text + "'", peek());
                const Token run = next();
                bool known = false;
                for (const std::string& id : names_.runs) known = known || id == run.text;
                if (!known) fail("no run '" + run.text + "' in this lesson", run);
                expectSymbol("]", "after the run id");
                n->kind = Node::Kind::Metric;
                n->text = t.text;
                n->run = run.text;
                n->isText = kind == 't';
                return n;
            }
            case Token::Kind::Symbol:
                if (t.text == "(") {
                    ++pos_;
                    NodePtr inner = parseOr();
                    expectSymbol(")", "to close '('");
                    return inner;
                }
                fail("expected a value, found '" + t.text + "'", t);
            case Token::Kind::End:
                fail("the rule ends where a value is expected", t);
        }
        fail("expected a value", t);
    }

    const std::string& text_;
    const VerdictRule::Names& names_;
    const std::string& where_;
    std::vector<Token> tokens_;
    std::size_t pos_ = 0;
};

MetricValue eval(const Node& n, const VerdictRule::Lookup& value);

double num(const Node& n, const VerdictRule::Lookup& value) { return eval(n, value).number; }

bool compare(const Node& n, const VerdictRule::Lookup& value) {
    const MetricValue a = eval(*n.a, value);
    const MetricValue b = eval(*n.b, value);
    if (a.isText) return (a.text == b.text) == (n.op == "==");
    const double margin = n.marginPercent ? n.marginValue / 100.0 * std::fabs(b.number) : n.marginValue;
    const double x = a.number;
    const double y = b.number;
    if (n.op == "==" || n.op == "!=") {
        const bool equal = n.margin == Node::Margin::Within ? std::fabs(x - y) <= margin : x == y;
        return equal == (n.op == "==");
    }
    bool holds = false;
    if (n.op == "<") holds = x < y;
    if (n.op == "<=") holds = x <= y;
    if (n.op == ">") holds = x > y;
    if (n.op == ">=") holds = x >= y;
    if (holds && n.margin == Node::Margin::By) holds = std::fabs(x - y) >= margin;
    return holds;
}

MetricValue eval(const Node& n, const VerdictRule::Lookup& value) {
    MetricValue v;
    switch (n.kind) {
        case Node::Kind::Number: v.number = n.number; break;
        case Node::Kind::Text:
            v.isText = true;
            v.text = n.text;
            break;
        case Node::Kind::Metric: return value(n.text, n.run);
        case Node::Kind::Neg: v.number = -num(*n.a, value); break;
        case Node::Kind::Not: v.number = num(*n.a, value) != 0.0 ? 0.0 : 1.0; break;
        case Node::Kind::And: v.number = (num(*n.a, value) != 0.0 && num(*n.b, value) != 0.0) ? 1.0 : 0.0; break;
        case Node::Kind::Or: v.number = (num(*n.a, value) != 0.0 || num(*n.b, value) != 0.0) ? 1.0 : 0.0; break;
        case Node::Kind::Add: v.number = num(*n.a, value) + num(*n.b, value); break;
        case Node::Kind::Sub: v.number = num(*n.a, value) - num(*n.b, value); break;
        case Node::Kind::Mul: v.number = num(*n.a, value) * num(*n.b, value); break;
        case Node::Kind::Div: {
            // x / 0 is not a number: every comparison with it is false, so a rule never holds by accident.
            const double d = num(*n.b, value);
            v.number = d == 0.0 ? std::nan("") : num(*n.a, value) / d;
            break;
        }
        case Node::Kind::Compare: v.number = compare(n, value) ? 1.0 : 0.0; break;
    }
    return v;
}

void collect(const Node& n, std::vector<std::pair<std::string, std::string>>& out) {
    if (n.kind == Node::Kind::Metric) {
        for (const auto& r : out) {
            if (r.first == n.text && r.second == n.run) return;
        }
        out.emplace_back(n.text, n.run);
        return;
    }
    if (n.a) collect(*n.a, out);
    if (n.b) collect(*n.b, out);
}

}  // namespace

VerdictRule VerdictRule::parse(const std::string& text, const Names& names, const std::string& where) {
    Parser parser(text, names, where);
    VerdictRule rule;
    rule.text_ = text;
    rule.root_ = parser.parseAll();
    if (rule.root_->isText) throw LessonError("verdict rule: a rule must be a condition, not a text", where);
    return rule;
}

bool VerdictRule::holds(const Lookup& value) const {
    const double result = eval(*root_, value).number;
    return result != 0.0 && !std::isnan(result);
}

std::vector<std::pair<std::string, std::string>> VerdictRule::references() const {
    std::vector<std::pair<std::string, std::string>> out;
    collect(*root_, out);
    return out;
}

}  // namespace allocscope::app
