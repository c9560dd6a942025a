/* placeholder: replaced in the next commit */
typedef int placeholder_11791;
