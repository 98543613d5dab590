public enum TernPlaceholder {}
