/// A parsed `--where` expression, before it is checked against an entity's attributes.
indirect enum PredicateExpression: Equatable {
    /// An attribute name and where it was written.
    struct Name: Equatable {
        let text: String
        let column: Int
    }

    /// A literal value and where it was written.
    struct Literal: Equatable {
        enum Value: Equatable {
            case integer(Int64)
            case real(Double)
            case string(String)
            case bool(Bool)
            case null
        }
        let value: Value
        let column: Int
    }

    enum Comparison: String, Equatable {
        case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }

    case constant(Bool)
    /// A bare true/false attribute: `isStarred` for `isStarred = true`.
    case isTrue(Name)
    case compare(Name, Comparison, Literal)
    case isIn(Name, [Literal], negated: Bool)
    case isNull(Name, negated: Bool)
    case beginsWith(Name, Literal)
    case contains(Name, Literal)
    case match(Literal)
    case and([PredicateExpression])
    case or([PredicateExpression])
    case not(PredicateExpression)
}
